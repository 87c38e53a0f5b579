package helmrelease_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// writeOnlyConfig is a release of the writeonly chart whose token and
// password come by set_wo, from ephemeral variables set in the environment
// (a plain variable is kept in a saved plan as every input is: the engine's
// doing, not the provider's), with more entries and set_wo_revision.
func writeOnlyConfig(t *testing.T, w *acctest.Workdir, ns, name string, token, password acctest.SecretValue, more string, revision int) string {
	w.SetEnv("TF_VAR_token", token.Plain)
	w.SetEnv("TF_VAR_password", password.Plain)
	return fmt.Sprintf(`
variable "token" {
  type      = string
  ephemeral = true
}

variable "password" {
  type      = string
  ephemeral = true
}

resource "k8sconnect_helm_release" "app" {
  name            = %q
  namespace       = %q
  chart           = %q
  timeout         = "60s"
  set_wo          = [{ name = "token", value = var.token }, { name = "password", value = var.password }%s]
  set_wo_revision = %d
  %s
}
`, name, ns, chartPath(t, "writeonly"), more, revision, acctest.Connection(t))
}

// set_wo values reach the cluster (a ConfigMap, a Secret, the release
// record) and nothing else: no plan, saved plan, state file (private state
// included), show output, diagnostic or provider log line holds them, plain
// or base64; objects shows the hash that stands in for them. The next plan is
// quiet; a new value without a new set_wo_revision is still seen and applied
// as an upgrade (helm history says so), and so is a new set_wo_revision
// alone. A template that fails quoting a value, and a value that would name
// an object (objects' keys are in the clear), fail the plan without it.
func TestAccHelmReleaseSetWriteOnly(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "writeonly"
	tok1, tok2, pw := acctest.NewSecretValue("wotok"), acctest.NewSecretValue("wotok"), acctest.NewSecretValue("wopw")
	bad := acctest.NewSecretValue("wobad")
	all := []acctest.SecretValue{tok1, tok2, pw, bad}

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
	nowhere := func(when string) {
		t.Helper()
		w.ExpectWriteOnlyNowhere(when, "k8sconnect_helm_release.app", "set_wo", all...)
		acctest.ExpectAbsentFromProviderLog(t, logPath, all...)
	}
	clusterHas := func(tok acctest.SecretValue) {
		t.Helper()
		if err := configMapData(t, ns, name+"-settings", "token", tok.Plain)(); err != nil {
			t.Error(err)
		}
		creds, _ := json.Marshal(acctest.MustGet(t, secrets, ns, name+"-creds").Object)
		acctest.ExpectPresent(t, "the Secret in the cluster", string(creds), pw.Base64())
	}

	w.Write(writeOnlyConfig(t, w, ns, name, tok1, pw, "", 1))
	human("apply of the install", "apply", "-auto-approve")
	clusterHas(tok1)
	nowhere("after the install")
	w.MustPlanNoChanges()

	// A new value, set_wo_revision unchanged: the object it reaches shows it
	// (as a new hash), and the apply is an upgrade, not a repair.
	w.Write(writeOnlyConfig(t, w, ns, name, tok2, pw, "", 1))
	r := w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a new set_wo value should plan 1 update, got %d (%v)\n%s", change, r.Err, r.Output)
	}
	acctest.ExpectAbsent(t, "plan -json of the new value", r.Output, all...)
	human("apply of the new value", "apply", "-auto-approve")
	clusterHas(tok2)
	if got := helmHistory(t, ns, name)[2]; got != "Upgrade complete" {
		t.Errorf("a new set_wo value should be an upgrade, helm history says revision 2 is %q", got)
	}
	nowhere("after the new value")
	w.MustPlanNoChanges()

	// set_wo_revision alone: an upgrade with the same values.
	w.Write(writeOnlyConfig(t, w, ns, name, tok2, pw, "", 2))
	r = w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a new set_wo_revision should plan 1 update, got %d (%v)\n%s", change, r.Err, r.Output)
	}
	human("apply of the new revision", "apply", "-auto-approve")
	if got := helmHistory(t, ns, name)[3]; got != "Upgrade complete" {
		t.Errorf("a new set_wo_revision should be an upgrade, helm history says revision 3 is %q", got)
	}
	w.MustPlanNoChanges()

	// A template that quotes the value in its failure, and a value that
	// would be part of an object's key: refused, without the value.
	w.SetEnv("TF_VAR_bad", bad.Plain)
	for what, entry := range map[string]string{"a failing template": "failWith", "an object's name": "suffix"} {
		w.Write(strings.Replace(writeOnlyConfig(t, w, ns, name, tok2, pw, `, { name = "`+entry+`", value = var.bad }`, 2),
			`resource "k8sconnect_helm_release"`, "variable \"bad\" {\n  type      = string\n  ephemeral = true\n}\n\nresource \"k8sconnect_helm_release\"", 1))
		r := w.Plan()
		w.MustFail(r, "plan with "+what)
		acctest.ExpectAbsent(t, "plan of "+what, r.Output, all...)
		want := "refusing the token"
		if entry == "suffix" {
			want = "holds a set_wo value"
		}
		if !r.HasError(want) {
			t.Errorf("the plan of %s should fail saying %q:\n%s", what, want, r.Output)
		}
	}
	acctest.ExpectAbsentFromProviderLog(t, logPath, all...)
	w.Write(writeOnlyConfig(t, w, ns, name, tok2, pw, "", 2)) // for the destroy's plan
	if notes := w.StateAttribute("k8sconnect_helm_release.app", "notes"); !strings.Contains(notes, "token") {
		t.Errorf("notes should be there, scrubbed: %q", notes)
	}
}
