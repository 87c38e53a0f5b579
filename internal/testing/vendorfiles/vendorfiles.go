// Package vendorfiles gives tests what vendors publish, unchanged: Helm
// charts and install bundles we did not write, so that k8sconnect_helm_release
// and k8sconnect_manifest_set are tried on their hooks, CRDs, webhooks and
// templating habits as a new user meets them. They come from the Go module
// proxy (the only package source CI reaches), inside the vendors' own Go
// modules, pinned by version and by the module's checksum. Nothing fetched is
// kept in this repository.
package vendorfiles

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Module is a vendor's Go module, pinned.
type Module struct {
	Path, Version string
	// Sum is the module's checksum (h1:...), as go.sum would hold it: a
	// module whose bytes changed under the same version is refused.
	Sum string
}

// Chart is a chart directory inside a vendor's Go module.
type Chart struct {
	Module
	// Dir is the chart's directory inside the module.
	Dir string
}

// File is one file inside a vendor's Go module.
type File struct {
	Module
	// Name is the file's path inside the module, slash-separated.
	Name string
}

// IngressNginx is the ingress-nginx chart 4.11.0 (controller 1.11.0): an
// admission webhook whose certificate a pre-install hook Job creates and a
// post-install hook Job patches in, each with hook-scoped RBAC that the
// hook-succeeded policy deletes.
var IngressNginx = Chart{
	Module: Module{
		Path:    "k8s.io/ingress-nginx",
		Version: "v0.0.0-20240708192948-52c50467d67d",
		Sum:     "h1:tZui5g6S4GO1hxLm6yrEoIXLkl4QfeGytlmZqZ+DmdQ=",
	},
	Dir: "charts/ingress-nginx",
}

// Gatekeeper is OPA Gatekeeper's chart 3.23.1: 17 CRDs in crds/ (which Helm
// installs before anything else and never upgrades or deletes), a
// pre-install/pre-upgrade hook Job that applies the CRDs again with kubectl,
// a post-install hook Job that labels the release's namespace, each with a
// hook-scoped ServiceAccount, ClusterRole and ClusterRoleBinding that the
// hook-succeeded policy deletes; then two Deployments (audit and controller
// manager), a Secret, a Service, RBAC, a PodDisruptionBudget and a
// ResourceQuota. Its cluster-scoped objects have fixed names, so one cluster
// holds one release of it at a time.
var Gatekeeper = Chart{
	Module: Module{
		Path:    "github.com/open-policy-agent/gatekeeper/v3",
		Version: "v3.23.1",
		Sum:     "h1:njHTm0SJ6ZEhhEgmQTpJKTGQbc99fSs4hGiEp1OIKck=",
	},
	Dir: "charts/gatekeeper",
}

// ArgoCDInstall is Argo CD 3.5.7's manifests/install.yaml, the bundle its
// getting-started guide applies with `kubectl apply -n argocd`: 59 objects,
// 1.9 MB, three CRDs (Application, ApplicationSet, AppProject; the first
// two over 500 KB each), seven ConfigMaps, two Secrets, six Deployments and
// a StatefulSet, eight Services, seven NetworkPolicies and RBAC, its
// namespaced objects with no namespace of their own. Its cluster-scoped
// objects have fixed names, so one cluster holds one install at a time.
var ArgoCDInstall = File{
	Module: Module{
		Path:    "github.com/argoproj/argo-cd/v3",
		Version: "v3.5.7",
		Sum:     "h1:Xm1BF+I5OgDKUG3SDK49vn2/Y5AMyaNVko+/JT08gj0=",
	},
	Name: "manifests/install.yaml",
}

var (
	mu   sync.Mutex
	dirs = map[Module]string{}
)

// Dir downloads the module (once per process; the module cache keeps it
// across runs), checks its checksum, and returns its directory, read-only as
// the module cache is.
func (m Module) Dir(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if d, ok := dirs[m]; ok {
		return d
	}
	cmd := exec.Command("go", "mod", "download", "-json", m.Path+"@"+m.Version)
	cmd.Dir = t.TempDir() // outside any module: nothing is added to a go.mod
	// The pinned Sum is the integrity check, checked below: no checksum
	// database is needed to fetch it. GOTOOLCHAIN=local: no other Go
	// toolchain is fetched for a module whose go.mod asks for a newer Go
	// (the download then fails, naming the version: pin an older release).
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GONOSUMDB="+m.Path, "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("downloading %s@%s from the Go module proxy: %v\n%s", m.Path, m.Version, err, out)
	}
	var got struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &got); err != nil || got.Error != "" {
		t.Fatalf("go mod download %s@%s: %v %s", m.Path, m.Version, err, got.Error)
	}
	if got.Sum != m.Sum {
		t.Fatalf("%s@%s has checksum %s, want %s: not the module the tests were written for", m.Path, m.Version, got.Sum, m.Sum)
	}
	dirs[m] = got.Dir
	return got.Dir
}

// Path returns the chart's directory in the downloaded module.
func (c Chart) Path(t testing.TB) string {
	t.Helper()
	p := filepath.Join(c.Module.Dir(t), filepath.FromSlash(c.Dir))
	if _, err := os.Stat(filepath.Join(p, "Chart.yaml")); err != nil {
		t.Fatalf("%s@%s holds no chart at %s: %v", c.Module.Path, c.Version, c.Dir, err)
	}
	return p
}

// Path returns the file's path in the downloaded module.
func (f File) Path(t testing.TB) string {
	t.Helper()
	p := filepath.Join(f.Module.Dir(t), filepath.FromSlash(f.Name))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s@%s holds no %s: %v", f.Module.Path, f.Version, f.Name, err)
	}
	return p
}

// Read returns the file's bytes.
func (f File) Read(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
