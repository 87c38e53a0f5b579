package patch_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A credential patched into an operator's Secret by patch_wo, written in
// the configuration without sensitive(): in no plan, state or output, yet a
// new value is planned and applied, drift is named and reverted, and the
// patch keeps owning the field across applies. Destroy releases it without
// the patch.
func TestAccPatch_writeOnlyPatchNeverInStateOrPlan(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	orig, first, second, drifted := acctest.NewSecretValue("orig"), acctest.NewSecretValue("wofirst"),
		acctest.NewSecretValue("wosecond"), acctest.NewSecretValue("wodrift")
	all := []acctest.SecretValue{orig, first, second, drifted, {Plain: c.Token}}
	acctest.ApplyAs(t, "operator", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: %s, user: YWRtaW4=}\n", ns, orig.Base64()))

	w := acctest.NewWorkdir(t)
	config := func(v acctest.SecretValue, revision int) {
		w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}
resource "k8sconnect_patch" "creds" {
  target            = { api_version = "v1", kind = "Secret", name = "creds", namespace = %q }
  patch_wo          = yamlencode({ data = { password = %q } })
  patch_wo_revision = %d
  take_ownership    = true
}
`, c.KubeconfigPath, ns, v.Base64(), revision))
	}
	run := func(what string, cmd ...string) {
		t.Helper()
		r := w.Human(cmd...)
		acctest.ExpectAbsent(t, what+" output", r.Output, all...)
	}
	nowhere := func(when string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(w.Dir(), "terraform.tfstate"))
		if err != nil {
			t.Fatal(err)
		}
		acctest.ExpectPresent(t, "the state file "+when, string(raw), "(sensitive, hmac-sha256:")
		acctest.ExpectAbsent(t, "the state file "+when, string(raw), all...)
		_, _, private := w.StateParts()
		acctest.ExpectAbsent(t, "decoded private state "+when, private, all...)
		shown := w.Run("show", "-json")
		acctest.ExpectAbsent(t, "show -json "+when, shown.Output, all...)
	}
	has := func(v acctest.SecretValue, when string) {
		t.Helper()
		obj := acctest.MustGet(t, secrets, ns, "creds")
		live, _ := json.Marshal(obj.Object)
		acctest.ExpectPresent(t, "the patched Secret "+when, string(live), v.Base64())
		owned := false
		for _, e := range obj.GetManagedFields() {
			if strings.HasPrefix(e.Manager, "k8sconnect-patch-") && e.FieldsV1 != nil &&
				strings.Contains(e.FieldsV1.GetRawString(), `"f:password"`) {
				owned = true
			}
		}
		if !owned {
			t.Errorf("%s: the patch no longer owns data.password: %v", when, acctest.Managers(obj))
		}
	}

	config(first, 1)
	w.Cleanup()
	run("plan", "plan")
	run("apply", "apply", "-auto-approve")
	has(first, "after the create")
	nowhere("after the create")
	w.MustPlanNoChanges()

	config(second, 2)
	r := w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a new value should plan 1 update, got %d (%v)\n%s", change, r.Err, r.Output)
	}
	acctest.ExpectAbsent(t, "plan -json of the new value", r.Output, all...)
	for _, d := range r.Warnings() {
		if strings.Contains(d.Summary, "kept in state") {
			t.Errorf("a patch given by patch_wo is warned about: %s", d.Detail)
		}
	}
	run("apply of the new value", "apply", "-auto-approve")
	has(second, "after the new value")
	nowhere("after the new value")
	w.MustPlanNoChanges()

	acctest.PatchAs(t, "kubectl-edit", secrets, ns, "creds", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	r = w.Plan()
	var warned string
	for _, d := range r.Warnings() {
		warned += d.Detail + "\n"
	}
	if !strings.Contains(warned, "data.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("no value-free drift warning:\n%s", warned)
	}
	acctest.ExpectAbsent(t, "plan -json after drift", r.Output, all...)
	run("apply reverting drift", "apply", "-auto-approve")
	has(second, "after reverting drift")
	w.MustPlanNoChanges()

	run("destroy", "destroy", "-auto-approve")
	for _, e := range acctest.MustGet(t, secrets, ns, "creds").GetManagedFields() {
		if strings.HasPrefix(e.Manager, "k8sconnect-patch-") {
			t.Errorf("destroy left the patch's manager %s on the Secret", e.Manager)
		}
	}
}
