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

// writeOnlyInputs are the three write-only ways to patch a Secret's
// data.password, each as the HCL expression of its value.
var writeOnlyInputs = []struct {
	attr string
	// expr is the attribute's value setting data.password to a base64 value.
	expr func(b64 string) string
}{
	{"patch_wo", func(b64 string) string { return fmt.Sprintf("yamlencode({ data = { password = %q } })", b64) }},
	{"merge_patch_wo", func(b64 string) string { return fmt.Sprintf("jsonencode({ data = { password = %q } })", b64) }},
	{"json_patch_wo", func(b64 string) string {
		return fmt.Sprintf(`jsonencode([{ op = "add", path = "/data/password", value = %q }])`, b64)
	}},
}

// A credential patched into an operator's Secret by each write-only input,
// written in the configuration without sensitive(): in no plan, state,
// output or provider log (TF_LOG=debug), yet a new value is planned and
// applied, drift is named and reverted, and the patch keeps owning the field
// across applies. Destroy releases it without the patch.
func TestAccPatch_writeOnlyPatchNeverInStateOrPlan(t *testing.T) {
	for _, in := range writeOnlyInputs {
		t.Run(in.attr, func(t *testing.T) {
			t.Parallel()
			writeOnlyPatchNeverInStateOrPlan(t, in.attr, in.expr)
		})
	}
}

func writeOnlyPatchNeverInStateOrPlan(t *testing.T, attr string, expr func(string) string) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	orig, first, second, drifted := acctest.NewSecretValue("orig"), acctest.NewSecretValue("wofirst"),
		acctest.NewSecretValue("wosecond"), acctest.NewSecretValue("wodrift")
	all := []acctest.SecretValue{orig, first, second, drifted, {Plain: c.Token}}
	acctest.ApplyAs(t, "operator", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: %s, user: YWRtaW4=}\n", ns, orig.Base64()))

	w := acctest.NewWorkdir(t)
	logPath := filepath.Join(t.TempDir(), "debug.log")
	w.SetEnv("TF_LOG", "DEBUG")
	w.SetEnv("TF_LOG_PATH", logPath)
	config := func(v acctest.SecretValue, revision int) {
		w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
resource "k8sconnect_patch" "creds" {
  target         = { api_version = "v1", kind = "Secret", name = "creds", namespace = %[2]q }
  %[3]s          = %[4]s
  %[3]s_revision = %[5]d
  take_ownership = true
}
`, c.KubeconfigPath, ns, attr, expr(v.Base64()), revision))
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
		acctest.ExpectPresent(t, "the state file "+when, string(raw), attr+"_revision")
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
		// A merge or JSON patch is an update, not an apply: the server
		// records its manager as owning what it set all the same.
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
			t.Errorf("a patch given by %s is warned about: %s", attr, d.Detail)
		}
	}
	run("apply of the new value", "apply", "-auto-approve")
	has(second, "after the new value")
	nowhere("after the new value")
	w.MustPlanNoChanges()

	acctest.PatchAs(t, "kubectl-edit", secrets, ns, "creds", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	r = w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("drift should plan 1 update, got %d (%v)\n%s", change, r.Err, r.Output)
	}
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
	nowhere("after reverting drift")
	w.MustPlanNoChanges()

	run("destroy", "destroy", "-auto-approve")
	for _, e := range acctest.MustGet(t, secrets, ns, "creds").GetManagedFields() {
		if strings.HasPrefix(e.Manager, "k8sconnect-patch-") {
			t.Errorf("destroy left the patch's manager %s on the Secret", e.Manager)
		}
	}

	acctest.ExpectAbsentFromProviderLog(t, logPath, all...)
}

// Two inputs at once, or a revision beside another input than its own, are
// refused at plan, naming the attributes. A json_patch_wo that the API server
// rejects, quoting the value it refuses (a Secret's type is immutable), is
// reported with the value hidden: every value of a write-only patch is
// secret, whatever its path. Nothing reaches the cluster.
func TestAccPatch_writeOnlyPatchRefused(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	orig, value := acctest.NewSecretValue("orig"), acctest.NewSecretValue("wotype")
	acctest.ApplyAs(t, "operator", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ntype: Opaque\ndata: {password: %s}\n", ns, orig.Base64()))
	before := acctest.MustGet(t, secrets, ns, "creds").GetResourceVersion()

	w := acctest.NewWorkdir(t)
	// From a sensitive variable, as a real credential comes: Terraform quotes
	// the configuration's source in its diagnostics, literals and all.
	w.SetEnv("TF_VAR_secret", value.Plain)
	for _, tc := range []struct{ name, attrs, want string }{
		{"merge_patch and merge_patch_wo", `merge_patch = jsonencode({ data = { a = "b" } })
  merge_patch_wo = jsonencode({ data = { password = var.secret } })`, "2 attributes specified when one (and only one) of [patch,patch_wo,merge_patch,merge_patch_wo,json_patch,json_patch_wo] is required"},
		{"a revision beside another input", `patch_wo = yamlencode({ data = { password = var.secret } })
  merge_patch_wo_revision = 1`, `Attribute "merge_patch_wo" must be specified when "merge_patch_wo_revision" is`},
		{"a json_patch_wo the server rejects", `json_patch_wo = jsonencode([{ op = "replace", path = "/type", value = var.secret }])`,
			"field is immutable"},
	} {
		w.Write(fmt.Sprintf(`
variable "secret" {
  type      = string
  sensitive = true
}
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}
resource "k8sconnect_patch" "creds" {
  target         = { api_version = "v1", kind = "Secret", name = "creds", namespace = %q }
  %s
  take_ownership = true
}
`, c.KubeconfigPath, ns, tc.attrs))
		r := w.Run("plan", "-input=false", "-no-color")
		w.MustFail(r, "plan with "+tc.name)
		flat := strings.Join(strings.Fields(r.Output), " ")
		if !strings.Contains(flat, tc.want) {
			t.Errorf("%s: want an error saying %q:\n%s", tc.name, tc.want, r.Output)
		}
		acctest.ExpectAbsent(t, "plan output with "+tc.name, r.Output, value, orig)
	}
	if !strings.Contains(w.Run("plan", "-input=false", "-no-color").Output, "(sensitive value hidden)") {
		t.Errorf("the server's rejection should be shown with the value hidden")
	}
	if after := acctest.MustGet(t, secrets, ns, "creds").GetResourceVersion(); after != before {
		t.Errorf("a refused patch changed the Secret (resourceVersion %s -> %s)", before, after)
	}
}

// A Secret patched by an input kept in state is warned about, naming the
// write-only input of the same patch type and its revision: following the
// advice changes where the patch is kept, not what it does.
func TestAccPatch_secretWarningNamesWriteOnlyTwin(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	pw := acctest.NewSecretValue("warn")
	acctest.ApplyAs(t, "operator", secrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: YQ==}\n", ns))
	w := acctest.NewWorkdir(t)
	for _, tc := range []struct{ attr, expr, twin string }{
		{"patch", fmt.Sprintf("yamlencode({ data = { password = %q } })", pw.Base64()), "patch_wo"},
		{"merge_patch", fmt.Sprintf("jsonencode({ data = { password = %q } })", pw.Base64()), "merge_patch_wo"},
		{"json_patch", fmt.Sprintf(`jsonencode([{ op = "add", path = "/data/password", value = %q }])`, pw.Base64()), "json_patch_wo"},
	} {
		w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}
resource "k8sconnect_patch" "creds" {
  target         = { api_version = "v1", kind = "Secret", name = "creds", namespace = %q }
  %s = sensitive(%s)
  take_ownership = true
}
`, c.KubeconfigPath, ns, tc.attr, tc.expr))
		r := w.Plan()
		if r.Err != nil {
			t.Fatalf("plan of %s: %v\n%s", tc.attr, r.Err, r.Output)
		}
		var warned string
		for _, d := range r.Warnings() {
			if d.Summary == "A patch of a Secret is kept in state" {
				warned += d.Detail
			}
		}
		want := fmt.Sprintf("is given by %s, which Terraform and OpenTofu keep in state in clear", tc.attr)
		advice := fmt.Sprintf("Give it by %s instead, with %[1]s_revision", tc.twin)
		if !strings.Contains(warned, want) || !strings.Contains(warned, advice) {
			t.Errorf("%s on a Secret: want a warning saying %q and %q, got:\n%s", tc.attr, want, advice, warned)
		}
		acctest.ExpectAbsent(t, "plan of "+tc.attr, r.Output, pw)
	}
}
