package helmrelease_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// writeChart writes files (path in the chart: text) into dir as a chart's
// directory, over what is there.
func writeChart(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A set_sensitive value that a template puts into an object's name or
// namespace is refused at plan, as k8sconnect_helm_template refuses it: keys
// of objects are never sensitive, so the value would be in the plan and the
// state in the clear. The error does not hold the value, and nothing is
// installed.
func TestAccHelmReleaseRefusesASecretInAName(t *testing.T) {
	ns := acctest.Namespace(t)
	secret := acctest.NewSecretValue("token")
	dir := t.TempDir()
	writeChart(t, dir, map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: named\nversion: 1.0.0\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
{{- if eq .Values.where "name" }}
  name: app-{{ .Values.token }}
{{- else }}
  name: app
  namespace: team-{{ .Values.token }}
{{- end }}
data: {a: b}
`,
	})
	for _, where := range []string{"name", "namespace"} {
		t.Run(where, func(t *testing.T) {
			w := acctest.NewWorkdir(t)
			// Passed as a variable, as a secret is: the error's snippet of the
			// configuration shows var.token.
			w.SetEnv("TF_VAR_token", secret.Plain)
			w.Write(fmt.Sprintf(`
variable "token" {
  type      = string
  sensitive = true
}

resource "k8sconnect_helm_release" "app" {
  name          = "named"
  namespace     = %q
  chart         = %q
  set           = [{ name = "where", value = %q }]
  set_sensitive = [{ name = "token", value = var.token }]
  %s
}
`, ns, dir, where, acctest.Connection(t)))
			w.Cleanup()
			r := w.Plan()
			w.MustFail(r, "plan of a chart that names an object with a set_sensitive value")
			if !r.HasError("holds a set_sensitive value", "pass that value with set instead") {
				t.Errorf("the plan should refuse the value in the object's %s:\n%s", where, r.Output)
			}
			acctest.ExpectAbsent(t, "the plan's output", r.Output, secret)
			if got := recordStatuses(t, ns, "named"); len(got) != 0 {
				t.Errorf("a refused plan wrote release records: %v", got)
			}
		})
	}
}

// agreeChart writes, into dir, a chart whose objects show what may change
// between a plan and its apply: app-settings the values and the chart
// (extra is more of its data), app-seen what a lookup reads of the
// ConfigMap "outside", app-token a value generated at every render (known
// only after apply, so never compared), and a post-install/post-upgrade hook
// marked hookMark.
func agreeChart(t *testing.T, dir, extra, hookMark string) {
	t.Helper()
	writeChart(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: agree\nversion: 1.0.0\n",
		"values.yaml": "greeting: hello\n",
		"templates/settings.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
` + extra,
		"templates/seen.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-seen
data:
  seen: {{ dig "data" "note" "none" (lookup "v1" "ConfigMap" .Release.Namespace "outside") | quote }}
`,
		"templates/token.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-token
data:
  token: {{ randAlphaNum 12 | quote }}
`,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    helm.sh/hook: post-install,post-upgrade
data:
  mark: ` + hookMark + "\n",
	})
}

// A saved plan whose chart or cluster changed before its apply fails the
// apply, naming the object and the field that differ (or chart_digest, for a
// change no object shows), with nothing applied and no revision written: an
// install whose chart was edited, an upgrade whose chart was edited, one
// whose lookup reads otherwise, and one whose hook alone changed. The
// engines plan again at apply and refuse a plan whose known values changed
// since the saved one; chart_digest makes the chart one of them. An object
// known only after apply (a value generated at every render) is never
// compared, so an apply with nothing changed since its plan goes through.
func TestAccHelmReleaseApplyDoesWhatItsPlanShowed(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "app"
	dir := t.TempDir()
	agreeChart(t, dir, "", "A")
	acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: outside, namespace: %s}\ndata: {note: one}\n", ns))
	w := acctest.NewWorkdir(t)
	config := func(greeting string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  timeout   = "60s"
  set       = [{ name = "greeting", value = %q }]
  %s
}
`, name, ns, dir, greeting, acctest.Connection(t))
	}
	w.Cleanup()
	settings := "core/ConfigMap/" + ns + "/" + name + "-settings"
	seen := "core/ConfigMap/" + ns + "/" + name + "-seen"

	// savedPlanRefused plans greeting into a file, runs between (which
	// changes the chart or the cluster), and applies the saved plan, which
	// must fail with an error that says every one of want; the release must
	// then be as it was.
	savedPlanRefused := func(what, greeting string, between func(), want ...string) {
		t.Helper()
		before := recordStatuses(t, ns, name)
		w.Write(config(greeting))
		if r := w.Run("plan", "-input=false", "-json", "-out=saved.tfplan"); r.Err != nil {
			t.Fatalf("%s: plan: %v\n%s", what, r.Err, r.Output)
		}
		between()
		r := w.Run("apply", "-input=false", "-json", "saved.tfplan")
		w.MustFail(r, what+": apply of the saved plan")
		if !r.HasError(want...) {
			t.Errorf("%s: the apply should fail saying %q:\n%s", what, want, r.Output)
		}
		if got := recordStatuses(t, ns, name); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("%s: the refused apply changed the release's records: %v -> %v", what, before, got)
		}
	}

	savedPlanRefused("an install whose chart was edited", "hello", func() { agreeChart(t, dir, "  extra: \"yes\"\n", "A") },
		settings, "data.extra")
	if err := present(t, configMaps, ns, name+"-settings", false)(); err != nil {
		t.Errorf("the refused install applied an object: %v", err)
	}
	w.MustApply() // planned anew: goes through
	if err := configMapData(t, ns, name+"-settings", "extra", "yes")(); err != nil {
		t.Fatal(err)
	}

	savedPlanRefused("an upgrade whose chart was edited", "bonjour", func() { agreeChart(t, dir, "  extra: \"no\"\n", "A") },
		settings, "data.extra")
	savedPlanRefused("an upgrade whose lookup reads otherwise", "bonjour", func() {
		acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "outside", `{"data":{"note":"two"}}`)
	}, seen, "data.seen")
	if err := configMapData(t, ns, name+"-settings", "greeting", "hello")(); err != nil {
		t.Errorf("a refused upgrade applied an object: %v", err)
	}
	savedPlanRefused("an upgrade whose hook alone changed", "bonjour", func() { agreeChart(t, dir, "  extra: \"no\"\n", "B") },
		"chart_digest")

	// Planned and applied with nothing changed in between: the apply goes
	// through, the generated value (known only after apply) not compared.
	w.Write(config("bonjour"))
	if r := w.Run("plan", "-input=false", "-json", "-out=saved.tfplan"); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	if r := w.Run("apply", "-input=false", "-json", "saved.tfplan"); r.Err != nil {
		t.Fatalf("apply of a saved plan with nothing changed since: %v\n%s", r.Err, r.Output)
	}
	for key, want := range map[string]string{"greeting": "bonjour", "extra": "no"} {
		if err := configMapData(t, ns, name+"-settings", key, want)(); err != nil {
			t.Error(err)
		}
	}
	if err := configMapData(t, ns, name+"-seen", "seen", "two")(); err != nil {
		t.Error(err)
	}
	if err := configMapData(t, ns, name+"-hook", "mark", "B")(); err != nil {
		t.Error(err)
	}
}
