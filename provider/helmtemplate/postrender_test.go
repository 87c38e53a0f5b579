package helmtemplate_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// lenientConfig reads the lenient chart as release name into ns with the
// password pw as set_sensitive and more arguments, and applies the
// namespaced objects and the sensitive ones, each a k8sconnect_object.
func lenientConfig(t *testing.T, ns, name, pw, more string) string {
	conn := acctest.Connection(t)
	return fmt.Sprintf(`
data "k8sconnect_helm_template" "app" {
  name          = %[3]q
  namespace     = %[2]q
  chart         = %[4]q
  set_sensitive = [{ name = "password", value = %[5]q }]
  %[6]s
  %[1]s
}

resource "k8sconnect_object" "namespaced" {
  for_each  = data.k8sconnect_helm_template.app.namespaced
  yaml_body = each.value
  %[1]s
}

resource "k8sconnect_object" "sensitive" {
  for_each         = toset(data.k8sconnect_helm_template.app.sensitive_keys)
  yaml_body        = data.k8sconnect_helm_template.app.sensitive[each.key]
  sensitive_fields = lookup(data.k8sconnect_helm_template.app.sensitive_fields, each.key, null)
  %[1]s
}
`, conn, ns, name, chartPath(t, "lenient"), pw, more)
}

// stateMap is a map attribute of the data source as the state holds it.
func stateMap[V any](t *testing.T, w *acctest.Workdir, attr string) map[string]V {
	t.Helper()
	var m map[string]V
	if err := json.Unmarshal([]byte(w.StateAttribute("data.k8sconnect_helm_template.app", attr)), &m); err != nil {
		t.Fatalf("the data source's %s: %v", attr, err)
	}
	return m
}

// postrender on the data source, as on k8sconnect_helm_release, with what a
// careless user does. Its arguments are checked as the release checks them.
// A program that fails after printing everything it was given (the chart's
// Secret, and a ConfigMap holding the set_sensitive value base64-encoded)
// fails the plan, naming it, its exit code and what it said, with the value
// hidden in every form; one that returns what is not YAML fails naming its
// output. One that changes an object and adds one that copies the password
// into a ConfigMap (and drops the field the cluster's schema lacks) hands
// out what it returned: the changed object in
// namespaced, the copy in sensitive (it holds the value), the hook as
// rendered (hooks are not piped); they apply, and the next plan is empty.
// The value is in no plan or apply output and, outside the attributes that
// hold it by design, nowhere in state.
func TestAccHelmTemplatePostrender(t *testing.T) {
	ns := acctest.Namespace(t)
	const name = "pr"
	pw := acctest.NewSecretValue("prpw")
	dir := t.TempDir()
	failing := script(t, dir, "failing", "cat >&2\necho 'kaboom: the post-renderer gave up' >&2\nexit 3\n")
	garbled := script(t, dir, "garbled", "pw=$(sed -n 's/^  password: //p')\nprintf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: [unclosed %s\\n' \"$pw\"\n")
	leaky := script(t, dir, "leaky", "in=$(cat)\npw=$(printf '%s\\n' \"$in\" | sed -n 's/^  password: //p')\n"+
		"printf '%s\\n' \"$in\" | sed -e 's/greeting: hello/greeting: post-rendered/' -e '/^color:/d'\n"+
		"printf -- '---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: %s-copied\\ndata:\\n  by: %s\\n  copy: %s\\n' \"$1\" \"$2\" \"$pw\"\n")
	config := func(postrender string) string { return lenientConfig(t, ns, name, pw.Plain, postrender) }
	w := acctest.NewWorkdir(t)
	w.Cleanup()

	// Checked as on the release: a program must be named, and no argument
	// may be null.
	for _, bad := range []struct{ postrender, says string }{
		{`postrender = { binary_path = "" }`, "binary_path"},
		{fmt.Sprintf(`postrender = { binary_path = %q, args = ["a", null] }`, leaky), "Null List Value"},
	} {
		w.Write(config(bad.postrender))
		r := w.Plan()
		w.MustFail(r, bad.postrender)
		if !strings.Contains(r.Output, bad.says) {
			t.Errorf("%s: the refusal should name %s:\n%s", bad.postrender, bad.says, r.Output)
		}
	}

	w.Write(config(fmt.Sprintf(`postrender = { binary_path = %q }`, failing)))
	r := w.Plan()
	w.MustFail(r, "a plan whose post-renderer fails")
	if !r.HasError("Post-renderer failed", "post-renderer "+failing+" exited with code 3", "kaboom: the post-renderer gave up") {
		t.Errorf("the failure should name the program, its exit code and what it said:\n%s", r.Output)
	}
	// It printed its input: the proof that the value was there to hide.
	if !r.HasError("Post-renderer failed", "kind: Secret", name+"-encoded", sensitive.Hidden) {
		t.Errorf("the failure should show what the program printed, the values hidden:\n%s", r.Output)
	}
	acctest.ExpectAbsent(t, "the failed plan -json", r.Output, pw)
	human := w.Run("plan", "-input=false", "-no-color")
	w.MustFail(human, "the same plan, as a user reads it")
	acctest.ExpectPresent(t, "the failed plan", human.Output, "kaboom")
	acctest.ExpectAbsent(t, "the failed plan", human.Output, pw)

	w.Write(config(fmt.Sprintf(`postrender = { binary_path = %q }`, garbled)))
	r = w.Plan()
	w.MustFail(r, "a plan whose post-renderer returns what is not YAML")
	if !r.HasError("Invalid chart output", "the output of post-renderer "+garbled) {
		t.Errorf("the failure should name the post-renderer's output:\n%s", r.Output)
	}
	acctest.ExpectAbsent(t, "the failed plan -json", r.Output, pw)
	if got := w.StateList(); len(got) != 0 {
		t.Errorf("the failed plans left %v in state", got)
	}
	acctest.MustNotExist(t, configMaps, ns, name+"-settings")

	w.Write(config(fmt.Sprintf(`postrender = { binary_path = %q, args = [%q, "first"] }`, leaky, name)))
	plan := w.Human("plan")
	acctest.ExpectPresent(t, "plan output", plan.Output, name+"-copied")
	acctest.ExpectAbsent(t, "plan output", plan.Output, pw)
	acctest.ExpectAbsent(t, "apply output", w.MustApply().Output, pw)

	namespaced := stateMap[string](t, w, "namespaced")
	settings, copied := "core/ConfigMap/"+ns+"/"+name+"-settings", "core/ConfigMap/"+ns+"/"+name+"-copied"
	if !strings.Contains(namespaced[settings], `"greeting":"post-rendered"`) {
		t.Errorf("namespaced should hand out the post-rendered ConfigMap: %q", namespaced[settings])
	}
	if _, plain := namespaced[copied]; plain {
		t.Errorf("%s holds the password and is in namespaced, in the clear", copied)
	}
	if hidden := stateMap[string](t, w, "sensitive"); hidden[copied] == "" {
		t.Errorf("%s, which holds the password, should be in sensitive: %v", copied, slices.Sorted(maps.Keys(hidden)))
	}
	if hook := stateMap[string](t, w, "hooks")["core/ConfigMap/"+ns+"/"+name+"-hook"]; !strings.Contains(hook, `"greeting":"hello"`) {
		t.Errorf("the hook should be handed out as rendered, not post-rendered: %q", hook)
	}
	if err := acctest.ConfigMapHas(t, ns, name+"-settings", "greeting", "post-rendered"); err != nil {
		t.Error(err)
	}
	if err := acctest.ConfigMapHas(t, ns, name+"-copied", "copy", pw.Plain); err != nil {
		t.Error(err)
	}
	outside, legit, private := w.StateParts("yaml_body", "set_sensitive", "sensitive")
	acctest.ExpectPresent(t, "the attributes that hold it", legit, pw.Plain)
	acctest.ExpectAbsent(t, "state outside them", outside, pw)
	acctest.ExpectAbsent(t, "private state", private, pw)
	w.MustPlanNoChanges()
}
