package patch_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// A patch of a Secret an operator manages: managed_fields, private state,
// warnings and every output hold no value, and drift on the patched key is
// named, without values, and reverted. The same for a strategic merge patch
// and for a JSON patch, whose values sit in a list of operations rather
// than in the object's shape.
func TestAccPatch_secretValuesNeverInClear(t *testing.T) {
	for _, tc := range []struct {
		attr string
		expr func(value string) string
	}{
		{"patch", func(v string) string { return fmt.Sprintf("yamlencode({ data = { password = %q } })", v) }},
		{"json_patch", func(v string) string {
			return fmt.Sprintf(`jsonencode([{ op = "replace", path = "/data/password", value = %q }])`, v)
		}},
	} {
		t.Run(tc.attr, func(t *testing.T) { secretPatchNeverInClear(t, tc.attr, tc.expr) })
	}
}

func secretPatchNeverInClear(t *testing.T, attr string, expr func(value string) string) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	orig, patched, drifted := acctest.NewSecretValue("orig"), acctest.NewSecretValue("patched"), acctest.NewSecretValue("drift")
	all := []acctest.SecretValue{orig, patched, drifted, {Plain: c.Token}}
	acctest.ApplyAs(t, "operator", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: %s, user: YWRtaW4=}\n", ns, orig.Base64()))

	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}
resource "k8sconnect_patch" "creds" {
  target         = { api_version = "v1", kind = "Secret", name = "creds", namespace = %q }
  %s = sensitive(%s)
  take_ownership = true
}
`, c.KubeconfigPath, ns, attr, expr(patched.Base64())))
	w.Cleanup()
	run := w.Human
	first := run("plan").Output
	acctest.ExpectAbsent(t, "plan output", first, all...)
	if !strings.Contains(first, "A patch of a Secret is kept in state") || !strings.Contains(first, attr+"_wo") {
		t.Errorf("a Secret patched by %s should warn, naming %[1]s_wo:\n%s", attr, first)
	}
	acctest.ExpectAbsent(t, "apply output", run("apply", "-auto-approve").Output, all...)
	if again := run("plan").Output; strings.Contains(again, "A patch of a Secret is kept in state") {
		t.Errorf("a plan that changes nothing should not warn again:\n%s", again)
	}
	live, _ := json.Marshal(acctest.MustGet(t, secrets, ns, "creds").Object)
	acctest.ExpectPresent(t, "the patched Secret", string(live), patched.Base64())
	outside, legit, private := w.StateParts(attr)
	acctest.ExpectPresent(t, attr+" in state", legit, patched.Base64())
	acctest.ExpectPresent(t, "managed_fields in state", outside, "(sensitive, hmac-sha256:")
	acctest.ExpectPresent(t, "decoded private state", private, "f:password") // in the owned fields
	acctest.ExpectAbsent(t, "state outside patch", outside, all...)
	acctest.ExpectAbsent(t, "decoded private state", private, all...)

	acctest.PatchAs(t, "kubectl-edit", secrets, ns, "creds", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	plan := w.Plan()
	if plan.Err != nil {
		t.Fatalf("plan after drift: %v\n%s", plan.Err, plan.Output)
	}
	var warned string
	for _, d := range plan.Warnings() {
		warned += d.Summary + "\n" + d.Detail + "\n"
	}
	if !strings.Contains(warned, "data.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("no value-free drift warning:\n%s", warned)
	}
	acctest.ExpectAbsent(t, "plan -json after drift", plan.Output, all...)
	acctest.ExpectAbsent(t, "apply reverting drift", run("apply", "-auto-approve").Output, all...)
	live, _ = json.Marshal(acctest.MustGet(t, secrets, ns, "creds").Object)
	acctest.ExpectPresent(t, "the reverted Secret", string(live), patched.Base64())
	outside, _, private = w.StateParts(attr)
	acctest.ExpectAbsent(t, "state outside patch after drift", outside, all...)
	acctest.ExpectAbsent(t, "decoded private state after drift", private, all...)
}
