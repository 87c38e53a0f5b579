// Package vendorcharts gives tests the Helm charts vendors publish, unchanged,
// so that k8sconnect_helm_release is tried on charts we did not write: their
// hooks, webhooks and templating habits. The charts come from the Go module
// proxy (the only package source CI reaches), inside the vendors' own Go
// modules, pinned by version and by the module's checksum.
package vendorcharts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Chart is a chart inside a vendor's Go module.
type Chart struct {
	Module, Version string
	// Sum is the module's checksum (h1:...), as go.sum would hold it: a
	// chart whose bytes changed under the same version is refused.
	Sum string
	// Dir is the chart's directory inside the module.
	Dir string
}

// IngressNginx is the ingress-nginx chart 4.11.0 (controller 1.11.0): an
// admission webhook whose certificate a pre-install hook Job creates and a
// post-install hook Job patches in, each with hook-scoped RBAC that the
// hook-succeeded policy deletes.
var IngressNginx = Chart{
	Module:  "k8s.io/ingress-nginx",
	Version: "v0.0.0-20240708192948-52c50467d67d",
	Sum:     "h1:tZui5g6S4GO1hxLm6yrEoIXLkl4QfeGytlmZqZ+DmdQ=",
	Dir:     "charts/ingress-nginx",
}

var (
	mu    sync.Mutex
	paths = map[Chart]string{}
)

// Path downloads the chart's module (once per process; the module cache
// keeps it across runs) and returns the chart's directory, read-only as the
// module cache is.
func (c Chart) Path(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := paths[c]; ok {
		return p
	}
	cmd := exec.Command("go", "mod", "download", "-json", c.Module+"@"+c.Version)
	cmd.Dir = t.TempDir() // outside any module: nothing is added to a go.mod
	// The pinned Sum is the integrity check, checked below: no checksum
	// database is needed to fetch it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GONOSUMDB="+c.Module)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("downloading %s@%s from the Go module proxy: %v\n%s", c.Module, c.Version, err, out)
	}
	var got struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &got); err != nil || got.Error != "" {
		t.Fatalf("go mod download %s@%s: %v %s", c.Module, c.Version, err, got.Error)
	}
	if got.Sum != c.Sum {
		t.Fatalf("%s@%s has checksum %s, want %s: not the chart the tests were written for", c.Module, c.Version, got.Sum, c.Sum)
	}
	p := filepath.Join(got.Dir, filepath.FromSlash(c.Dir))
	if _, err := os.Stat(filepath.Join(p, "Chart.yaml")); err != nil {
		t.Fatalf("%s@%s holds no chart at %s: %v", c.Module, c.Version, c.Dir, err)
	}
	paths[c] = p
	return p
}
