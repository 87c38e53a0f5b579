package object_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// secretConfig is what docs/guides/secrets.md tells users to write: the provider holds the
// connection (a kubeconfig file, so no credential enters state), yaml_body of
// a Secret is wrapped in sensitive(), and a ConfigMap carrying a credential
// names it in sensitive_fields. A field wait reads the Secret's data.
func secretConfig(kubeconfig, ns, password, token, apiKey string) string {
	return fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}

resource "k8sconnect_object" "secret" {
  yaml_body = sensitive(<<-EOT
    apiVersion: v1
    kind: Secret
    metadata: {name: db, namespace: %[2]s}
    type: Opaque
    data: {password: %[3]s}
    stringData: {token: %[4]s}
  EOT
  )
}

resource "k8sconnect_object" "settings" {
  yaml_body = sensitive(<<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[2]s}
    data: {apiKey: %[5]s, mode: fast}
  EOT
  )
  sensitive_fields = ["data.apiKey"]
}

resource "k8sconnect_wait" "password" {
  resource_ref = k8sconnect_object.secret.resource_ref
  wait_for     = { field = "data.password", timeout = "30s" }
}
`, kubeconfig, ns, password, token, apiKey)
}

// A Secret's values, and a field named in sensitive_fields, appear nowhere a
// user or a log collector looks: plan and apply output (human and JSON),
// warnings, the state outside yaml_body, private state, the provider's TRACE
// log. Drift on them by kubectl is still detected, explained without values,
// and reverted.
func TestAccObject_secretValuesNeverInClear(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	password, token, apiKey := acctest.NewSecretValue("pw"), acctest.NewSecretValue("tok"), acctest.NewSecretValue("key")
	drifted, driftedTok, driftedKey := acctest.NewSecretValue("drift"), acctest.NewSecretValue("drifttok"), acctest.NewSecretValue("driftkey")
	admin := acctest.SecretValue{Plain: c.Token}
	all := []acctest.SecretValue{password, token, apiKey, drifted, driftedTok, driftedKey, admin}

	w := acctest.NewWorkdir(t)
	logPath := filepath.Join(t.TempDir(), "trace.log")
	w.SetEnv("TF_LOG", "TRACE")
	w.SetEnv("TF_LOG_PATH", logPath)
	w.Write(secretConfig(c.KubeconfigPath, ns, password.Base64(), token.Plain, apiKey.Plain))
	w.Cleanup()

	human := w.Human
	plan := human("plan")
	acctest.ExpectAbsent(t, "plan output", plan.Output, all...)
	if !strings.Contains(plan.Output, "managed_state_projection") {
		t.Logf("plan output:\n%s", plan.Output)
	}
	apply := human("apply", "-auto-approve")
	acctest.ExpectAbsent(t, "apply output", apply.Output, all...)

	// The values are where they belong: the cluster, and yaml_body in state.
	live, _ := json.Marshal(acctest.MustGet(t, secrets, ns, "db").Object)
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), password.Base64())
	acctest.ExpectPresent(t, "the Secret in the cluster", string(live), token.Base64())
	outside, bodies, private := w.StateParts()
	for _, f := range []string{password.Base64(), token.Plain, apiKey.Plain} {
		acctest.ExpectPresent(t, "yaml_body in state", bodies, f)
	}
	acctest.ExpectPresent(t, "state outside yaml_body", outside, "(sensitive, hmac-sha256:")
	acctest.ExpectPresent(t, "decoded private state", private, "f:password") // in the owned fields
	acctest.ExpectAbsent(t, "state outside yaml_body", outside, all...)
	acctest.ExpectAbsent(t, "decoded private state", private, all...)
	if strings.Contains(outside, "cluster_ca_certificate\": \"-----BEGIN") {
		t.Errorf("state holds connection details though the provider block has them")
	}

	// kubectl changes the sensitive values under another manager: a data key,
	// the data key that stringData.token wrote, and the ConfigMap's apiKey.
	acctest.PatchAs(t, "kubectl-edit", secrets, ns, "db", fmt.Sprintf(`{"data":{"password":%q,"token":%q}}`, drifted.Base64(), driftedTok.Base64()))
	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "settings", fmt.Sprintf(`{"data":{"apiKey":%q}}`, driftedKey.Plain))

	jplan := w.Plan()
	if jplan.Err != nil {
		t.Fatalf("plan after drift: %v\n%s", jplan.Err, jplan.Output)
	}
	if _, change, _ := jplan.Changes(); change != 2 {
		t.Errorf("drift on both sensitive fields should plan 2 updates, got %d\n%s", change, jplan.Output)
	}
	var drift string
	for _, d := range jplan.Warnings() {
		if strings.Contains(d.Summary, "Drift") {
			drift += d.Detail + "\n"
		}
	}
	for _, want := range []string{"data.password: changed (sensitive: values not shown) (changed by kubectl-edit)",
		"stringData.token: changed (sensitive: values not shown) (changed by kubectl-edit)",
		"data.apiKey: changed (sensitive: values not shown) (changed by kubectl-edit)"} {
		if !strings.Contains(drift, want) {
			t.Errorf("drift warnings lack %q:\n%s", want, drift)
		}
	}
	acctest.ExpectAbsent(t, "plan -json output after drift", jplan.Output, all...)
	acctest.ExpectAbsent(t, "plan output after drift", human("plan").Output, all...)
	acctest.ExpectAbsent(t, "apply output reverting drift", human("apply", "-auto-approve").Output, all...)

	live, _ = json.Marshal(acctest.MustGet(t, secrets, ns, "db").Object)
	acctest.ExpectPresent(t, "the reverted Secret", string(live), password.Base64())
	acctest.ExpectPresent(t, "the reverted Secret", string(live), token.Base64())
	if err := acctest.ConfigMapHas(t, ns, "settings", "apiKey", apiKey.Plain); err != nil {
		t.Errorf("sensitive_fields drift not reverted: %v", err)
	}
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan after revert: %v\n%s", r.Err, r.Output)
	} else if add, change, remove := r.Changes(); add+change+remove != 0 {
		t.Errorf("plan after the revert is not empty: +%d ~%d -%d\n%s", add, change, remove, r.Output)
	}
	outside, _, private = w.StateParts()
	acctest.ExpectAbsent(t, "state outside yaml_body after drift", outside, all...)
	acctest.ExpectAbsent(t, "decoded private state after drift", private, all...)

	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	providerLines := acctest.ProviderLogLines(string(logs))
	if !strings.Contains(providerLines, "k8sconnect") {
		t.Fatalf("no provider lines found in the TRACE log: the log search would be blind")
	}
	acctest.ExpectAbsent(t, "the provider's TRACE log", providerLines, all...)
	// The engine's own TRACE lines are not the provider's to control; say
	// whether they hold a value, for whoever reads the test log.
	for _, v := range all {
		for _, f := range v.Forms() {
			if n := strings.Count(string(logs), f); n > 0 {
				t.Logf("note: the engine's own TRACE log holds a secret value %d times (not the provider's lines)", n)
			}
		}
	}
}

// A custom resource that carries a credential, named in sensitive_fields: the
// value appears in no output or state outside yaml_body, and when the API
// server rejects a new value its error (which quotes the value) is shown with
// the value hidden.
func TestAccObject_crdSensitiveFieldsAndScrubbedErrors(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	group := acctest.Name("g") + ".sec.k8sconnect.test"
	good := acctest.NewSecretValue("pw")
	bad := acctest.SecretValue{Plain: strings.ToUpper(acctest.NewSecretValue("pw").Plain)}
	// The password comes from a sensitive variable, as it would in real use
	// (Terraform quotes the configuration's source in diagnostics), which
	// makes yaml_body sensitive as well.
	w := acctest.NewWorkdir(t)
	config := func(password string) string {
		w.SetEnv("TF_VAR_password", password)
		return fmt.Sprintf(`
variable "password" {
  type      = string
  sensitive = true
}
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
resource "k8sconnect_object" "crd" {
  yaml_body = %[4]q
}
resource "k8sconnect_object" "db" {
  yaml_body = <<-YAML
    apiVersion: %[2]s/v1
    kind: Database
    metadata: {name: orders, namespace: %[3]s}
    spec: {user: app, password: "${var.password}"}
  YAML
  sensitive_fields = ["spec.password"]
}
`, c.KubeconfigPath, group, ns, fixtures.CRD(group, "Database", "user: {type: string}\npassword: {type: string, pattern: '^[a-z0-9-]+$'}"))
	}
	w.Write(config(good.Plain))
	w.Cleanup()
	apply := w.Run("apply", "-auto-approve", "-input=false", "-no-color")
	if apply.Err != nil {
		t.Fatalf("apply: %v\n%s", apply.Err, apply.Output)
	}
	acctest.ExpectAbsent(t, "apply output", apply.Output, good)
	outside, bodies, private := w.StateParts()
	acctest.ExpectPresent(t, "yaml_body in state", bodies, good.Plain)
	acctest.ExpectPresent(t, "state outside yaml_body", outside, `"spec.password": "(sensitive, hmac-sha256:`)
	acctest.ExpectPresent(t, "state outside yaml_body", outside, `"spec.user": "app"`)
	acctest.ExpectAbsent(t, "state outside yaml_body", outside, good)
	acctest.ExpectAbsent(t, "decoded private state", private, good)

	// The server rejects the new value and quotes it; the plan shows the
	// error without it.
	w.Write(config(bad.Plain))
	plan := w.Run("plan", "-input=false", "-no-color")
	w.MustFail(plan, "plan with a password the CRD's schema rejects")
	if !strings.Contains(plan.Output, "spec.password") || !strings.Contains(plan.Output, "(sensitive value hidden)") {
		t.Errorf("the rejection should name spec.password with its value hidden:\n%s", plan.Output)
	}
	acctest.ExpectAbsent(t, "plan output of a rejected value", plan.Output, good, bad)
	w.Write(config(good.Plain)) // so that Cleanup can destroy
}

// Values that select list elements are values too: under sensitive_fields, a
// set of API keys and a list of grants keyed by their token would otherwise
// print every key in the names of managed_state_projection and
// field_ownership. The names hold keyed hashes instead, stay stable (an
// unchanged configuration plans nothing), and drift on an element (someone
// drops one key) is planned, named without values and reverted.
func TestAccObject_sensitiveListSelectors(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	group := acctest.Name("g") + ".sec.k8sconnect.test"
	databases := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "databases"}
	keyA, keyB, keyC := acctest.NewSecretValue("ka"), acctest.NewSecretValue("kb"), acctest.NewSecretValue("kc")
	grant := acctest.NewSecretValue("grant")
	all := []acctest.SecretValue{keyA, keyB, keyC, grant}

	w := acctest.NewWorkdir(t)
	config := func(keys ...acctest.SecretValue) string {
		list := make([]string, len(keys))
		for i, k := range keys {
			list[i] = fmt.Sprintf("%q", k.Plain)
		}
		w.SetEnv("TF_VAR_keys", "["+strings.Join(list, ",")+"]")
		w.SetEnv("TF_VAR_grant", grant.Plain)
		return fmt.Sprintf(`
variable "keys" {
  type      = list(string)
  sensitive = true
}
variable "grant" {
  type      = string
  sensitive = true
}
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
resource "k8sconnect_object" "crd" {
  yaml_body = %[4]q
}
resource "k8sconnect_object" "db" {
  yaml_body = <<-YAML
    apiVersion: %[2]s/v1
    kind: Database
    metadata: {name: orders, namespace: %[3]s}
    spec:
      apiKeys: ${jsonencode(var.keys)}
      grants: [{token: "${var.grant}", scope: read}]
  YAML
  sensitive_fields = ["spec.apiKeys", "spec.grants"]
  depends_on       = [k8sconnect_object.crd]
}
`, c.KubeconfigPath, group, ns, fixtures.CRD(group, "Database", `apiKeys:
  type: array
  x-kubernetes-list-type: set
  items: {type: string}
grants:
  type: array
  x-kubernetes-list-type: map
  x-kubernetes-list-map-keys: [token]
  items:
    type: object
    required: [token]
    properties:
      token: {type: string}
      scope: {type: string}`))
	}
	human := func(what string, cmd ...string) acctest.Result {
		t.Helper()
		r := w.Human(cmd...)
		acctest.ExpectAbsent(t, what, r.Output, all...)
		return r
	}
	checkState := func(when string) {
		t.Helper()
		outside, _, private := w.StateParts()
		acctest.ExpectPresent(t, "state outside yaml_body "+when, outside, `spec.apiKeys[=\"(sensitive, hmac-sha256:`)
		acctest.ExpectPresent(t, "state outside yaml_body "+when, outside, `spec.grants[token=\"(sensitive, hmac-sha256:`)
		acctest.ExpectAbsent(t, "state outside yaml_body "+when, outside, all...)
		acctest.ExpectAbsent(t, "decoded private state "+when, private, all...)
	}

	w.Write(config(keyA, keyB))
	w.Cleanup()
	human("plan of the create", "plan")
	human("apply of the create", "apply", "-auto-approve")
	checkState("after create")
	w.MustPlanNoChanges()

	// A rotated key: the plan names the change without either value.
	w.Write(config(keyA, keyC))
	human("plan of a rotated key", "plan")
	human("apply of a rotated key", "apply", "-auto-approve")
	checkState("after rotation")
	w.MustPlanNoChanges()
	live, _ := json.Marshal(acctest.MustGet(t, databases, ns, "orders").Object)
	acctest.ExpectPresent(t, "the rotated keys in the cluster", string(live), keyC.Plain)

	// Someone drops keyC: drift on a hashed element, planned and reverted.
	acctest.PatchAs(t, "kubectl-edit", databases, ns, "orders", fmt.Sprintf(`{"spec":{"apiKeys":[%q]}}`, keyA.Plain))
	jplan := w.Plan()
	if jplan.Err != nil {
		t.Fatalf("plan after drift: %v\n%s", jplan.Err, jplan.Output)
	}
	if _, change, _ := jplan.Changes(); change != 1 {
		t.Errorf("a dropped sensitive set element should plan 1 update, got %d\n%s", change, jplan.Output)
	}
	acctest.ExpectAbsent(t, "plan -json output after drift", jplan.Output, all...)
	var drift string
	for _, d := range jplan.Warnings() {
		drift += d.Summary + ": " + d.Detail + "\n"
	}
	if !strings.Contains(drift, `spec.apiKeys[="(sensitive, hmac-sha256:`) || !strings.Contains(drift, `ignore_fields: ["spec.apiKeys"]`) {
		t.Errorf("the drift warning should name the dropped key by its hash, and offer the list (which a user can "+
			"write) to ignore_fields:\n%s", drift)
	}
	human("apply reverting drift", "apply", "-auto-approve")
	live, _ = json.Marshal(acctest.MustGet(t, databases, ns, "orders").Object)
	acctest.ExpectPresent(t, "the reverted keys in the cluster", string(live), keyC.Plain)
	checkState("after the revert")
	w.MustPlanNoChanges()
}
