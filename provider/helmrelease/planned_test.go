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
