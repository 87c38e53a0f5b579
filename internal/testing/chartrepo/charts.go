package chartrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"sigs.k8s.io/yaml"
)

// Chart is a tiny chart: a values.yaml with a greeting and a template that
// renders it into a ConfigMap named after the release. It depends on deps.
func Chart(name, version string, deps ...*chart.Dependency) *chart.Chart {
	values := []byte("greeting: hello from " + name + " " + version + "\n")
	template := []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-` + name + `
data:
  greeting: {{ .Values.greeting | quote }}
`)
	c := &chart.Chart{
		Metadata: &chart.Metadata{
			APIVersion:   chart.APIVersionV2,
			Name:         name,
			Version:      version,
			Description:  "a chart made by internal/testing/chartrepo",
			Type:         "application",
			Dependencies: deps,
		},
		Templates: []*common.File{{Name: "templates/configmap.yaml", ModTime: time.Unix(0, 0), Data: template}},
		Raw:       []*common.File{{Name: "values.yaml", ModTime: time.Unix(0, 0), Data: values}},
	}
	c.Values, _ = common.ReadValues(values)
	return c
}

// Package is c as `helm package` writes it: a gzipped tar of the chart.
func Package(c *chart.Chart) ([]byte, error) {
	dir, err := os.MkdirTemp("", "chartrepo-package-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path, err := chartutil.Save(c, dir)
	if err != nil {
		return nil, fmt.Errorf("packaging %s %s: %w", c.Name(), c.Metadata.Version, err)
	}
	return os.ReadFile(path)
}

// MustPackage is Package for a test, which it fails on an error.
func MustPackage(t testing.TB, c *chart.Chart) []byte {
	t.Helper()
	archive, err := Package(c)
	if err != nil {
		t.Fatal(err)
	}
	return archive
}

// WriteDir writes c as a chart directory dir/<name>, with lock as its
// Chart.lock when it is not nil, and returns the directory.
func WriteDir(c *chart.Chart, dir string, lock *chart.Lock) (string, error) {
	if err := chartutil.SaveDir(c, dir); err != nil {
		return "", fmt.Errorf("writing chart %s: %w", c.Name(), err)
	}
	chartDir := filepath.Join(dir, c.Name())
	if lock != nil {
		data, err := yaml.Marshal(lock)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(chartDir, "Chart.lock"), data, 0o600); err != nil {
			return "", err
		}
	}
	return chartDir, nil
}
