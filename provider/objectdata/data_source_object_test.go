package objectdata_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

func TestAccObjectData_readsAnObjectAsYAMLJSONAndValue(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	acctest.ApplyAs(t, "someone", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {mode: fast}\n", ns))
	acctest.ApplyAs(t, "someone", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s, annotations: {kubectl.kubernetes.io/last-applied-configuration: '{\"stringData\":{\"password\":\"hunter2\"}}'}}\nstringData: {password: hunter2}\n", ns))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
data "k8sconnect_object" "cm" {
  api_version = "v1"
  kind        = "ConfigMap"
  name        = "settings"
  namespace   = %[1]q
  %[2]s
}
data "k8sconnect_object" "secret" {
  api_version = "v1"
  kind        = "Secret"
  name        = "creds"
  namespace   = %[1]q
  %[2]s
}
output "mode" { value = data.k8sconnect_object.cm.object.data.mode }
output "password" {
  value     = data.k8sconnect_object.secret.secret_data["password"]
  sensitive = true
}
`, ns, conn),
				// kubectl's last-applied-configuration copies the values too.
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttrWith("data.k8sconnect_object.secret", "yaml_body", func(v string) error {
						if strings.Contains(v, "hunter2") || strings.Contains(v, "aHVudGVyMg") {
							return fmt.Errorf("the Secret's value appears in yaml_body:\n%s", v)
						}
						if !strings.Contains(v, "last-applied-configuration") {
							return fmt.Errorf("the annotation is gone rather than redacted:\n%s", v)
						}
						return nil
					}),
					resource.TestCheckResourceAttrWith("data.k8sconnect_object.secret", "json", func(v string) error {
						if strings.Contains(v, "hunter2") || strings.Contains(v, "aHVudGVyMg") {
							return fmt.Errorf("the Secret's value appears in json:\n%s", v)
						}
						return nil
					}),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("mode", knownvalue.StringExact("fast")),
					statecheck.ExpectKnownOutputValue("password", knownvalue.StringExact("hunter2")),
					statecheck.ExpectKnownValue("data.k8sconnect_object.cm", tfjsonpath.New("yaml_body"), knownvalue.StringRegexp(regexp.MustCompile(`(?s)mode: fast`))),
					statecheck.ExpectKnownValue("data.k8sconnect_object.cm", tfjsonpath.New("json"), knownvalue.StringRegexp(regexp.MustCompile(`"mode":"fast"`))),
					statecheck.ExpectKnownValue("data.k8sconnect_object.secret", tfjsonpath.New("json"), knownvalue.StringRegexp(regexp.MustCompile(`sensitive: see secret_data`))),
				},
			},
		},
	})
}

func TestAccObjectData_missingObjectIsAClearError(t *testing.T) {
	conn := acctest.Connection(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "k8sconnect_object" "nope" {
  api_version = "apps/v1"
  kind        = "Deployment"
  name        = "does-not-exist"
  %s
}
`, conn),
			ExpectError: regexp.MustCompile(`Deployment default/does-not-exist does not exist`),
		}},
	})
}

// sensitive_fields on the data source: a credential in a kind other than
// Secret (here a ConfigMap that someone else applied with kubectl, whose
// last-applied-configuration copies the value) appears only in the sensitive
// sensitive_values, never in plan or apply output, yaml_body, json, object or
// anywhere else in state.
func TestAccObjectData_sensitiveFieldsStayOutOfEveryOutput(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	key, token := acctest.NewSecretValue("key"), acctest.NewSecretValue("tok")
	lastApplied := fmt.Sprintf(`{"data":{"apiKey":%q,"mode":"fast"},"tokens":[%q]}`, key.Plain, token.Plain)
	acctest.ApplyAs(t, "kubectl-client-side-apply", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s, annotations: {kubectl.kubernetes.io/last-applied-configuration: %q}}\n"+
			"data: {apiKey: %s, mode: fast, tokens: %q}\n", ns, lastApplied, key.Plain, `["`+token.Plain+`"]`))

	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
data "k8sconnect_object" "settings" {
  api_version      = "v1"
  kind             = "ConfigMap"
  name             = "settings"
  namespace        = %[2]q
  sensitive_fields = ["data.apiKey", "data[\"tokens\"]", "data.absent"]
}
output "mode" { value = data.k8sconnect_object.settings.object.data.mode }
output "key_read" {
  value     = data.k8sconnect_object.settings.sensitive_values["data.apiKey"] == %[3]q
  sensitive = true
}
output "body" { value = data.k8sconnect_object.settings.yaml_body }
`, c.KubeconfigPath, ns, key.Plain))
	apply := w.Run("apply", "-auto-approve", "-input=false", "-no-color")
	if apply.Err != nil {
		t.Fatalf("apply: %v\n%s", apply.Err, apply.Output)
	}
	acctest.ExpectAbsent(t, "apply output", apply.Output, key, token)
	acctest.ExpectPresent(t, "apply output", apply.Output, "(sensitive: see sensitive_values)")
	outside, legit, _ := w.StateParts("sensitive_values")
	acctest.ExpectPresent(t, "sensitive_values in state", legit, key.Plain)
	acctest.ExpectPresent(t, "sensitive_values in state", legit, token.Plain)
	acctest.ExpectPresent(t, "state outside sensitive_values", outside, `"mode": "fast"`)
	acctest.ExpectAbsent(t, "state outside sensitive_values", outside, key, token)
	if got := w.Run("output", "-raw", "key_read"); got.Err != nil || got.Output != "true" {
		t.Errorf("sensitive_values does not hold the value: output key_read = %q (%v)", got.Output, got.Err)
	}

	// A path that cannot be read is refused before anything is read.
	w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
data "k8sconnect_object" "settings" {
  api_version      = "v1"
  kind             = "ConfigMap"
  name             = "settings"
  namespace        = %[2]q
  sensitive_fields = ["data[apiKey"]
}
`, c.KubeconfigPath, ns))
	bad := w.Run("plan", "-input=false", "-no-color")
	w.MustFail(bad, "plan with an unreadable sensitive_fields entry")
	if !strings.Contains(bad.Output, "Invalid sensitive_fields entry") {
		t.Errorf("plan should name the bad entry:\n%s", bad.Output)
	}
}
