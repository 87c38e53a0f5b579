package helmchart

import (
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

func digestTestChart() *chart.Chart {
	c := &chart.Chart{
		Metadata:  &chart.Metadata{Name: "web", Version: "1.0.0", AppVersion: "2.0", APIVersion: chart.APIVersionV2},
		Values:    map[string]any{"replicas": 1, "image": map[string]any{"tag": "v1", "repo": "web"}},
		Templates: []*common.File{{Name: "templates/a.yaml", Data: []byte("a")}, {Name: "templates/hook.yaml", Data: []byte("h")}},
		Files:     []*common.File{{Name: "crds/crd.yaml", Data: []byte("c")}, {Name: "README.md", Data: []byte("r")}},
	}
	sub := &chart.Chart{Metadata: &chart.Metadata{Name: "sub", Version: "0.1.0", APIVersion: chart.APIVersionV2},
		Templates: []*common.File{{Name: "templates/s.yaml", Data: []byte("s")}}}
	c.AddDependency(sub)
	return c
}

// The same chart gives the same digest however it was read (file order,
// modification times, map order); any change to what a revision renders or
// runs gives another.
func TestDigestNamesWhatTheChartIs(t *testing.T) {
	base := Digest(digestTestChart())
	same := digestTestChart()
	same.Templates[0], same.Templates[1] = same.Templates[1], same.Templates[0]
	same.ModTime = time.Now()
	same.Templates[0].ModTime = time.Now()
	same.Values = map[string]any{"image": map[string]any{"repo": "web", "tag": "v1"}, "replicas": 1}
	if got := Digest(same); got != base {
		t.Errorf("the same chart read otherwise has another digest: %s, want %s", got, base)
	}
	for name, change := range map[string]func(c *chart.Chart){
		"a template":          func(c *chart.Chart) { c.Templates[0].Data = []byte("A") },
		"a hook":              func(c *chart.Chart) { c.Templates[1].Data = []byte("H") },
		"a new template":      func(c *chart.Chart) { c.Templates = append(c.Templates, &common.File{Name: "templates/NOTES.txt"}) },
		"a file under crds/":  func(c *chart.Chart) { c.Files[0].Data = []byte("C") },
		"values.yaml":         func(c *chart.Chart) { c.Values["replicas"] = 2 },
		"appVersion":          func(c *chart.Chart) { c.Metadata.AppVersion = "2.1" },
		"the schema":          func(c *chart.Chart) { c.Schema = []byte("{}") },
		"a dependency":        func(c *chart.Chart) { c.Dependencies()[0].Templates[0].Data = []byte("S") },
		"a renamed template":  func(c *chart.Chart) { c.Templates[0].Name = "templates/b.yaml" },
		"bytes moved between": func(c *chart.Chart) { c.Templates[0].Data, c.Templates[1].Data = []byte("ah"), []byte("") },
	} {
		c := digestTestChart()
		change(c)
		if Digest(c) == base {
			t.Errorf("changing %s leaves the digest as it was", name)
		}
	}
}
