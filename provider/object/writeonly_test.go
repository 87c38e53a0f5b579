package object_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// writeOnlySecretConfig is a Secret given by yaml_body_wo, nothing wrapped in
// sensitive(): the password comes from an ephemeral variable set in the
// environment (a plain variable, or a default, is kept in a saved plan as
// every input is: the engine's doing, not the provider's), the token is
// written in the configuration itself.
func writeOnlySecretConfig(w *acctest.Workdir, kubeconfig, ns, name, password, token string, revision int) string {
	w.SetEnv("TF_VAR_password", password)
	return fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}

variable "password" {
  type      = string
  ephemeral = true
}

resource "k8sconnect_object" "secret" {
  yaml_body_wo = <<-EOT
    apiVersion: v1
    kind: Secret
    metadata:
      name: %[3]s
      namespace: %[2]s
      labels: {team: payments}
    type: Opaque
    data: {password: ${base64encode(var.password)}}
    stringData: {token: %[4]s}
  EOT
  yaml_body_wo_revision = %[5]d
}
`, kubeconfig, ns, name, token, revision)
}

// A Secret given by yaml_body_wo appears in no plan, no state and no output
// of the engine, yet every plan still sees it: a new value is planned and
// applied, an edit in the cluster shows as drift and is reverted, and every
// apply sends the whole body so k8sconnect keeps owning each field. A rename
// replaces the object though state holds no body to compare.
func TestAccObject_writeOnlyBodyNeverInStateOrPlan(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	pw1, pw2, pw3 := acctest.NewSecretValue("wopw"), acctest.NewSecretValue("wopw"), acctest.NewSecretValue("wopw")
	tok := acctest.NewSecretValue("wotok")
	drifted := acctest.NewSecretValue("wodrift")
	all := []acctest.SecretValue{pw1, pw2, pw3, tok, drifted, {Plain: c.Token}}

	w := acctest.NewWorkdir(t)
	logPath := filepath.Join(t.TempDir(), "trace.log")
	w.SetEnv("TF_LOG", "TRACE")
	w.SetEnv("TF_LOG_PATH", logPath)
	w.Cleanup()

	human := func(what string, cmd ...string) acctest.Result {
		t.Helper()
		r := w.Human(cmd...)
		acctest.ExpectAbsent(t, what+" output", r.Output, all...)
		return r
	}
	// Every place a user or a tool reads: the saved plan and the state as
	// show -json renders them, and the state file's bytes, private state
	// included.
	nowhere := func(when string) {
		t.Helper()
		w.ExpectWriteOnlyNowhere(when, "k8sconnect_object.secret", "yaml_body_wo", all...)
	}
	clusterHas := func(name string, pw acctest.SecretValue) {
		t.Helper()
		live, _ := json.Marshal(acctest.MustGet(t, secrets, ns, name).Object)
		acctest.ExpectPresent(t, "the Secret in the cluster", string(live), pw.Base64())
		acctest.ExpectPresent(t, "the Secret in the cluster", string(live), tok.Base64())
	}
	// Server-Side Apply drops a field its only manager stops sending: after
	// each apply k8sconnect must still own every field the body sets.
	ownsEverything := func(name, when string) {
		t.Helper()
		obj := acctest.MustGet(t, secrets, ns, name)
		var owned string
		for _, e := range obj.GetManagedFields() {
			if e.Manager == "k8sconnect" && e.Operation == "Apply" && e.FieldsV1 != nil {
				owned += e.FieldsV1.GetRawString()
			}
		}
		for _, f := range []string{`"f:password"`, `"f:token"`, `"f:team"`, `"f:type"`} {
			if !strings.Contains(owned, f) {
				t.Errorf("%s: k8sconnect no longer owns %s of the Secret; its fields: %s", when, f, owned)
			}
		}
		if obj.GetLabels()["team"] != "payments" {
			t.Errorf("%s: the label set by yaml_body_wo is gone: %v", when, obj.GetLabels())
		}
	}

	w.Write(writeOnlySecretConfig(w, c.KubeconfigPath, ns, "db", pw1.Plain, tok.Plain, 1))
	plan := human("plan of the create", "plan")
	if !strings.Contains(plan.Output, "yaml_body_wo") {
		t.Errorf("the plan should list yaml_body_wo (as write-only, without its value):\n%s", plan.Output)
	}
	human("apply of the create", "apply", "-auto-approve")
	clusterHas("db", pw1)
	ownsEverything("db", "after the create")
	nowhere("after the create")
	w.MustPlanNoChanges()

	// A new value with a new revision: planned (as a changed hash) and applied.
	w.Write(writeOnlySecretConfig(w, c.KubeconfigPath, ns, "db", pw2.Plain, tok.Plain, 2))
	jplan := w.Plan()
	if _, change, _ := jplan.Changes(); jplan.Err != nil || change != 1 {
		t.Fatalf("a new value and revision should plan 1 update, got %d (%v)\n%s", change, jplan.Err, jplan.Output)
	}
	acctest.ExpectAbsent(t, "plan -json of the rotation", jplan.Output, all...)
	human("apply of the rotation", "apply", "-auto-approve")
	clusterHas("db", pw2)
	ownsEverything("db", "after the rotation")
	nowhere("after the rotation")
	w.MustPlanNoChanges()

	// A new value without a new revision is still planned: the plan's dry run
	// sees yaml_body_wo, and any apply would send it anyway.
	w.Write(writeOnlySecretConfig(w, c.KubeconfigPath, ns, "db", pw3.Plain, tok.Plain, 2))
	if _, change, _ := w.Plan().Changes(); change != 1 {
		t.Errorf("a new value under the same revision should plan 1 update, got %d", change)
	}
	human("apply of a value under the same revision", "apply", "-auto-approve")
	clusterHas("db", pw3)
	w.MustPlanNoChanges()

	// A new revision alone plans an apply, which changes nothing and keeps
	// every field owned.
	w.Write(writeOnlySecretConfig(w, c.KubeconfigPath, ns, "db", pw3.Plain, tok.Plain, 3))
	if _, change, _ := w.Plan().Changes(); change != 1 {
		t.Errorf("a new revision alone should plan 1 update, got %d", change)
	}
	human("apply of a revision alone", "apply", "-auto-approve")
	clusterHas("db", pw3)
	ownsEverything("db", "after a revision alone")
	w.MustPlanNoChanges()

	// Someone edits the Secret: drift, named without values, and reverted.
	acctest.PatchAs(t, "kubectl-edit", secrets, ns, "db", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	jplan = w.Plan()
	if _, change, _ := jplan.Changes(); jplan.Err != nil || change != 1 {
		t.Fatalf("drift should plan 1 update, got %d (%v)\n%s", change, jplan.Err, jplan.Output)
	}
	var warnings string
	for _, d := range jplan.Warnings() {
		warnings += d.Summary + ": " + d.Detail + "\n"
	}
	if !strings.Contains(warnings, "data.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("the drift warning should name data.password and kubectl-edit:\n%s", warnings)
	}
	acctest.ExpectAbsent(t, "plan -json after drift", jplan.Output, all...)
	human("apply reverting drift", "apply", "-auto-approve")
	clusterHas("db", pw3)
	ownsEverything("db", "after reverting drift")
	nowhere("after reverting drift")
	w.MustPlanNoChanges()

	// A new name is another object: replaced, though neither state nor plan
	// holds a body that differs.
	uid := acctest.UID(t, secrets, ns, "db")
	w.Write(writeOnlySecretConfig(w, c.KubeconfigPath, ns, "db2", pw3.Plain, tok.Plain, 3))
	if add, _, remove := w.Plan().Changes(); add != 1 || remove != 1 {
		t.Errorf("a renamed Secret should plan a replacement (+1 -1), got +%d -%d", add, remove)
	}
	human("apply of the rename", "apply", "-auto-approve")
	acctest.MustNotExist(t, secrets, ns, "db")
	clusterHas("db2", pw3)
	if acctest.UID(t, secrets, ns, "db2") == uid {
		t.Errorf("the renamed Secret kept the old UID")
	}
	w.MustPlanNoChanges()

	// Destroy needs no body.
	human("destroy", "destroy", "-auto-approve")
	acctest.MustNotExist(t, secrets, ns, "db2")

	acctest.ExpectAbsentFromProviderLog(t, logPath, all...)
}

// Exactly one of yaml_body and yaml_body_wo, and a revision only beside
// yaml_body_wo: refused at plan time, naming the attributes, nothing applied.
func TestAccObject_writeOnlyBodyChoiceRefused(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	cm := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: choice, namespace: %s}
data: {a: b}
`, ns)
	w := acctest.NewWorkdir(t)
	for _, tc := range []struct{ name, attrs, want string }{
		{"both", fmt.Sprintf("yaml_body = %q\n  yaml_body_wo = %[1]q", cm), "yaml_body_wo"},
		{"neither", "delete_protection = false", "yaml_body"},
		{"revision beside yaml_body", fmt.Sprintf("yaml_body = %q\n  yaml_body_wo_revision = 1", cm), "yaml_body_wo"},
	} {
		w.Write(fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %q }
}
resource "k8sconnect_object" "x" {
  %s
}
`, c.KubeconfigPath, tc.attrs))
		r := w.Plan()
		w.MustFail(r, "plan with "+tc.name)
		if len(r.Errors()) == 0 || !strings.Contains(r.Output, tc.want) {
			t.Errorf("%s: want an error naming %s:\n%s", tc.name, tc.want, r.Output)
		}
	}
	acctest.MustNotExist(t, configMaps, ns, "choice")
}

// A Secret given by yaml_body warns, naming yaml_body_wo, on the plans that
// create or change it, and only those: a user who chose yaml_body (wrapped in
// sensitive(), which the provider cannot see) is not told again at every
// plan. A ConfigMap, and a Secret given by yaml_body_wo, are not warned about.
func TestAccObject_secretInYAMLBodyWarns(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	pw := acctest.NewSecretValue("warnpw")
	w := acctest.NewWorkdir(t)
	config := func(value string) string {
		return fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = { kubeconfig_file = %[1]q }
}
resource "k8sconnect_object" "plain" {
  yaml_body = sensitive(<<-EOT
    apiVersion: v1
    kind: Secret
    metadata: {name: plain, namespace: %[2]s}
    stringData: {password: %[3]s}
  EOT
  )
}
resource "k8sconnect_object" "wo" {
  yaml_body_wo = <<-EOT
    apiVersion: v1
    kind: Secret
    metadata: {name: wo, namespace: %[2]s}
    stringData: {password: %[3]s}
  EOT
}
resource "k8sconnect_object" "settings" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[2]s}
    data: {mode: fast}
  EOT
}
`, c.KubeconfigPath, ns, value)
	}
	warned := func(r acctest.Result) []acctest.Diagnostic {
		t.Helper()
		if r.Err != nil {
			t.Fatalf("plan: %v\n%s", r.Err, r.Output)
		}
		acctest.ExpectAbsent(t, "plan -json", r.Output, pw)
		var out []acctest.Diagnostic
		for _, d := range r.Warnings() {
			if d.Summary == "A Secret in yaml_body is kept in state" {
				out = append(out, d)
			}
		}
		return out
	}
	w.Write(config(pw.Plain))
	w.Cleanup()
	got := warned(w.Plan())
	if len(got) != 1 || !strings.Contains(got[0].Detail, "Secret "+ns+"/plain") ||
		!strings.Contains(got[0].Detail, "yaml_body_wo") || !strings.Contains(got[0].Detail, "OpenTofu 1.11") {
		t.Fatalf("want one warning, about the Secret given by yaml_body, naming yaml_body_wo: %+v", got)
	}
	w.MustApply()
	if got := warned(w.Plan()); len(got) != 0 {
		t.Errorf("a plan that changes nothing should not warn again: %+v", got)
	}
	w.Write(config(pw.Plain + "-2"))
	if got := warned(w.Plan()); len(got) != 1 {
		t.Errorf("a plan that changes the Secret's yaml_body should warn once: %+v", got)
	}
}

// The warning on a destroyed Secret given by yaml_body (for the user whose
// for_each over a YAML data source lost its Secrets) comes exactly with the
// plans that destroy such a Secret: not for a ConfigMap, not for a Secret
// given by yaml_body_wo, once per Secret on a whole destroy, and never with
// a value.
func TestAccObject_destroyedSecretWarns(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	pw := acctest.NewSecretValue("destroypw")
	w := acctest.NewWorkdir(t)
	objects := map[string]string{
		"settings": fmt.Sprintf("yaml_body = <<-EOT\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: settings, namespace: %s}\n    data: {mode: fast}\n  EOT", ns),
		"plain":    fmt.Sprintf("yaml_body = sensitive(<<-EOT\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: plain, namespace: %s}\n    stringData: {password: %s}\n  EOT\n  )", ns, pw.Plain),
		"wo":       fmt.Sprintf("yaml_body_wo = <<-EOT\n    apiVersion: v1\n    kind: Secret\n    metadata: {name: wo, namespace: %s}\n    stringData: {password: %s}\n  EOT", ns, pw.Plain),
	}
	config := func(names ...string) {
		text := fmt.Sprintf("provider \"k8sconnect\" {\n  cluster_connection = { kubeconfig_file = %q }\n}\n", c.KubeconfigPath)
		for _, n := range names {
			text += fmt.Sprintf("resource \"k8sconnect_object\" %q {\n  %s\n}\n", n, objects[n])
		}
		w.Write(text)
	}
	warnings := func(r acctest.Result, what string, removes int) []string {
		t.Helper()
		if _, _, remove := r.Changes(); r.Err != nil || remove != removes {
			t.Fatalf("%s should destroy %d, got %d (%v)\n%s", what, removes, remove, r.Err, r.Output)
		}
		acctest.ExpectAbsent(t, what, r.Output, pw)
		var out []string
		for _, d := range r.Warnings() {
			if d.Summary == "A Secret given by yaml_body is destroyed" {
				out = append(out, d.Detail)
			}
		}
		return out
	}
	config("settings", "plain", "wo")
	w.Cleanup()
	w.MustApply()

	for _, gone := range []string{"settings", "wo"} {
		var rest []string
		for _, n := range []string{"settings", "plain", "wo"} {
			if n != gone {
				rest = append(rest, n)
			}
		}
		config(rest...)
		if got := warnings(w.Plan(), "a plan without "+gone, 1); len(got) != 0 {
			t.Errorf("the destroy of %s should not warn: %q", gone, got)
		}
	}
	config("settings", "wo")
	if got := warnings(w.Plan(), "a plan without the Secret given by yaml_body", 1); len(got) != 1 || !strings.Contains(got[0], "Secret "+ns+"/plain") {
		t.Errorf("the destroy of the Secret given by yaml_body should warn once, naming it: %q", got)
	}
	config("settings", "plain", "wo")
	got := warnings(w.Run("plan", "-destroy", "-input=false", "-json"), "plan -destroy", 3)
	if len(got) != 1 || !strings.Contains(got[0], "Secret "+ns+"/plain") {
		t.Errorf("a whole destroy should warn once, for the Secret given by yaml_body: %q", got)
	}
}
