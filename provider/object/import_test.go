package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/object"
)

func TestParseImportID(t *testing.T) {
	for in, want := range map[string]string{
		"apps/v1/Deployment/prod/web":                          "|apps/v1|Deployment|prod|web",
		"v1/Namespace/prod":                                    "|v1|Namespace||prod",
		"rbac.authorization.k8s.io/v1/ClusterRole/x":           "|rbac.authorization.k8s.io/v1|ClusterRole||x",
		"kubernetes-admin@kubernetes#v1/ConfigMap/default/cfg": "kubernetes-admin@kubernetes|v1|ConfigMap|default|cfg",
	} {
		ctx, id, err := object.ParseImportID(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := strings.Join([]string{ctx, id.APIVersion, id.Kind, id.Namespace, id.Name}, "|"); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"web", "Deployment/web", "apps/v1/Deployment", "apps/v1/Deployment/a/b/c"} {
		if _, _, err := object.ParseImportID(bad); err == nil || !strings.Contains(err.Error(), "must be [<context>#]") {
			t.Errorf("%q: error = %v", bad, err)
		}
	}
}

// Import through an import block: the object keeps its UID, the first apply
// takes ownership of the declared fields in place.
func TestAccObject_importThenApplyInPlace(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	existing := acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: legacy, namespace: %s}\ndata: {greeting: hello}\n", ns))
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	uid := uidRecorder{uid: string(existing.GetUID())}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
import {
  to = k8sconnect_object.cm
  id = "v1/ConfigMap/%s/legacy"
}
%s`, ns, configMapConfig(conn, ns, "legacy", "hello")),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("k8sconnect_object.cm", plancheck.ResourceActionUpdate),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				uid.unchanged(t, configMaps, ns, "legacy"),
				configMapHas(t, ns, "legacy", "greeting", "hello"),
			),
		}},
	})
}

// -generate-config-out writes a clean yaml_body and never the kubeconfig.
func TestAccObject_importGeneratesCleanConfig(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: generated, namespace: %s, labels: {app: demo}}\ndata: {greeting: hello}\n", ns))
	t.Setenv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf("import {\n  to = k8sconnect_object.generated\n  id = \"v1/ConfigMap/%s/generated\"\n}\n", ns))
	r := w.Run("plan", "-generate-config-out=generated.tf", "-input=false", "-json")
	if r.Err != nil && !strings.Contains(r.Output, "generated.tf") {
		t.Fatalf("plan -generate-config-out failed: %v\n%s", r.Err, r.Output)
	}
	b, err := os.ReadFile(filepath.Join(w.Dir(), "generated.tf"))
	if err != nil {
		t.Fatalf("no generated.tf: %v\n%s", err, r.Output)
	}
	gen := string(b)
	for _, want := range []string{"kind: ConfigMap", "greeting: hello", "app: demo", "name: generated"} {
		if !strings.Contains(gen, want) {
			t.Errorf("generated config lacks %q:\n%s", want, gen)
		}
	}
	c := localcluster.Shared(t)
	for _, secret := range []string{c.Token, "managedFields", "resourceVersion", "uid:", "k8sconnect.io/"} {
		if strings.Contains(gen, secret) {
			t.Errorf("generated config contains %q:\n%s", secret, gen)
		}
	}
}

// Importing a Secret writes placeholders, never its values, into the
// generated configuration, warns what to do, and refuses the placeholder at
// plan. The import reads through the whole $KUBECONFIG list, as kubectl does
// (the first file here does not exist), and records the list, not content.
func TestAccObject_importSecretWritesNoValues(t *testing.T) {
	ns := acctest.Namespace(t)
	value := acctest.NewSecretValue("imported")
	acctest.ApplyAs(t, "kubectl", secrets, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: legacy
  namespace: %s
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"%s"}}'
data: {password: %s}
stringData: {plain: %s}
`, ns, value.Base64(), value.Base64(), value.Plain))
	c := localcluster.Shared(t)
	list := filepath.Join(t.TempDir(), "missing-config") + string(filepath.ListSeparator) + c.KubeconfigPath
	w := acctest.NewWorkdir(t)
	w.SetEnv("KUBECONFIG", list)
	w.Write(fmt.Sprintf("import {\n  to = k8sconnect_object.legacy\n  id = \"v1/Secret/%s/legacy\"\n}\n", ns))
	r := w.Run("plan", "-generate-config-out=generated.tf", "-input=false", "-no-color")
	b, err := os.ReadFile(filepath.Join(w.Dir(), "generated.tf"))
	if err != nil {
		t.Fatalf("no generated.tf: %v\n%s", err, r.Output)
	}
	gen := string(b)
	acctest.ExpectPresent(t, "the Secret in the cluster", fmt.Sprint(acctest.MustGet(t, secrets, ns, "legacy").Object), value.Base64())
	acctest.ExpectAbsent(t, "generated.tf", gen, value, acctest.SecretValue{Plain: c.Token})
	acctest.ExpectAbsent(t, "plan -generate-config-out output", r.Output, value, acctest.SecretValue{Plain: c.Token})
	for _, want := range []string{object.SecretPlaceholder, "password:", "kind: Secret", list} {
		if !strings.Contains(gen, want) {
			t.Errorf("generated config lacks %q:\n%s", want, gen)
		}
	}
	if !strings.Contains(r.Output, "The Secret's values were not imported") {
		t.Errorf("no warning about the placeholders:\n%s", r.Output)
	}
	// Left as generated, the configuration is refused, so the placeholder can
	// never be applied.
	again := w.Run("plan", "-input=false", "-no-color")
	w.MustFail(again, "plan with the placeholder left in")
	if !strings.Contains(again.Output, "placeholder left in yaml_body") {
		t.Errorf("plan with placeholders: want a clear refusal, got:\n%s", again.Output)
	}
}
