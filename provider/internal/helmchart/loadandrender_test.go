package helmchart_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// localChart writes a chart directory whose one template is template.
func localChart(t *testing.T, template string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: \"2.0\"\n",
		"values.yaml":            "greeting: hello\n",
		"templates/object.yaml":  template,
		"templates/NOTES.txt":    "Installed {{ .Release.Name }}.\n",
		"templates/_helpers.tpl": "{{- define \"app.name\" -}}app{{- end -}}\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const configMapTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install
`

func TestLoadAndRenderGivesWhatTheReleaseAndTheDataSourceNeed(t *testing.T) {
	dir := localChart(t, configMapTemplate)
	out, failure := helmchart.LoadAndRender(context.Background(), helmchart.Request{
		Source:  helmchart.Source{Chart: dir},
		Values:  helmchart.Values{Documents: []string{"greeting: hi"}, Set: []helmchart.Setting{{Name: "extra", Value: "1"}}},
		Release: helmchart.Release{Name: "web", Namespace: "shop"},
	})
	if failure != nil {
		t.Fatalf("%s: %v", failure.Title, failure)
	}
	if out.Chart.Version != "1.0.0" || out.Chart.Metadata.AppVersion != "2.0" {
		t.Errorf("chart %s, app %s", out.Chart.Version, out.Chart.Metadata.AppVersion)
	}
	if out.Rendered.Notes != "Installed web.\n" {
		t.Errorf("notes %q", out.Rendered.Notes)
	}
	if body := out.Sorted.Objects.Namespaced["core/ConfigMap/shop/web"]; !strings.Contains(body, `"greeting":"hi"`) {
		t.Errorf("the ConfigMap, placed in the release namespace with the values merged: %v", out.Sorted.Objects.Namespaced)
	}
	if _, ok := out.Sorted.Hooks["batch/Job/shop/web-migrate"]; !ok {
		t.Errorf("the hook kept apart: %v", out.Sorted.Hooks)
	}
	// The record's values are the user's alone, without the chart's
	// defaults that rendering coalesced in.
	if len(out.Config) != 2 || out.Config["greeting"] != "hi" || out.Config["extra"] != int64(1) {
		t.Errorf("config %#v", out.Config)
	}
}

func TestLoadAndRenderNamesTheStepThatFailed(t *testing.T) {
	good := localChart(t, configMapTemplate)
	for _, tc := range []struct {
		name, title, says string
		req               helmchart.Request
		rendered          bool
	}{
		{name: "values", title: "Invalid values", says: "values[0] is not a YAML map of values",
			req: helmchart.Request{Source: helmchart.Source{Chart: good}, Values: helmchart.Values{Documents: []string{"- a list"}}}},
		{name: "load", title: "Chart not loaded", says: "missing",
			req: helmchart.Request{Source: helmchart.Source{Chart: filepath.Join(good, "missing")}}},
		{name: "render", title: "Chart not rendered", says: "nil pointer",
			req: helmchart.Request{Source: helmchart.Source{Chart: localChart(t, "{{ .Values.no.such }}\n")}}},
		{name: "output", title: "Invalid chart output", says: "templates/object.yaml", rendered: true,
			req: helmchart.Request{Source: helmchart.Source{Chart: localChart(t, "kind: ConfigMap\nmetadata: {}\n")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Release = helmchart.Release{Name: "web", Namespace: "shop"}
			out, failure := helmchart.LoadAndRender(context.Background(), tc.req)
			if failure == nil {
				t.Fatal("no failure")
			}
			t.Logf("%s: %v", failure.Title, failure)
			if failure.Title != tc.title || !strings.Contains(failure.Err.Error(), tc.says) {
				t.Errorf("%q: %v; want %q saying %q", failure.Title, failure.Err, tc.title, tc.says)
			}
			if got := out.Rendered != nil; got != tc.rendered {
				t.Errorf("rendered output kept: %v, want %v", got, tc.rendered)
			}
		})
	}
}
