package toolchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// The table must agree with the modules it builds from.
func TestTableMatchesToolModules(t *testing.T) {
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		gomod := filepath.Join(repo, tl.modDir, "go.mod")
		v, err := requiredVersion(gomod, tl.module)
		if err != nil {
			t.Errorf("%s: %v", tl.name, err)
			continue
		}
		if v != tl.version {
			t.Errorf("%s: %s requires %s %s, table pins %s", tl.name, gomod, tl.module, v, tl.version)
		}
		data, err := os.ReadFile(gomod)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tl.pkg) {
			t.Errorf("%s: %s has no tool directive for %s", tl.name, gomod, tl.pkg)
		}
	}
}

// The helm CLI is the Helm the provider module renders charts with.
func TestHelmMatchesProviderModule(t *testing.T) {
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := lookup(Helm)
	v, err := requiredVersion(filepath.Join(repo, "go.mod"), h.module)
	if err != nil {
		t.Fatal(err)
	}
	if v != Version(Helm) {
		t.Errorf("go.mod requires %s %s, the toolchain pins helm %s: move bridge/go.mod and the table to %s", h.module, v, Version(Helm), v)
	}
}

func TestPathLayout(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvToolsDir, dir)
	if _, err := Path("kwok"); err == nil || !strings.Contains(err.Error(), "make tools") {
		t.Fatalf("Path of a missing tool: got %v, want an error that says to run make tools", err)
	}
	want := filepath.Join(dir, "kwok-"+Version("kwok"), "kwok")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Path("kwok"); err != nil || got != want {
		t.Fatalf("Path(kwok) = %q, %v; want %q", got, err, want)
	}
	// The pulumi CLI finds its language hosts next to itself.
	root, _ := CacheDir()
	cli, _ := lookup("pulumi")
	for _, name := range PulumiTools {
		host, ok := lookup(name)
		if !ok {
			t.Errorf("PulumiTools names %s, which the table lacks", name)
		} else if filepath.Dir(host.path(root)) != filepath.Dir(cli.path(root)) {
			t.Errorf("%s is not beside the pulumi CLI: %s", name, host.path(root))
		}
	}
	// Helm 3's binary is named helm, as users have it (Helm 3 names its field
	// manager after it), in a directory of its own.
	helm3, _ := lookup(Helm3)
	helm4, _ := lookup(Helm)
	if p := helm3.path(root); filepath.Base(p) != "helm" || filepath.Dir(p) == filepath.Dir(helm4.path(root)) {
		t.Errorf("the Helm 3 CLI is at %s: want a binary named helm, not beside Helm 4's %s", p, helm4.path(root))
	}
	if _, err := Path("nope"); err == nil {
		t.Error("Path of an unknown tool: no error")
	}
}

func TestTerraformFromEnv(t *testing.T) {
	t.Setenv(EnvTerraform, filepath.Join(t.TempDir(), "missing"))
	if _, err := Path("terraform"); err == nil || !strings.Contains(err.Error(), EnvTerraform) {
		t.Fatalf("got %v, want an error naming %s", err, EnvTerraform)
	}
}

func TestLockFileWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u, err := lockFile(path)
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second lock taken while the first is held")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("second lock not taken after the first was released")
	}
}

// A tool module requires every module it shares with the provider and the
// bridge at no lower version than they do. The tools are built with the same
// flags as the tests and into the same build cache, so a package compiled at
// one version serves both; one module behind (x/sys, say) changes the build
// key of every package above it, and a cold run compiles the shared part of
// the graph twice. Raise the tool module's requirement (go mod edit -require)
// when this fails.
func TestToolModulesShareProviderVersions(t *testing.T) {
	repo, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	provider := map[string]string{} // module path -> highest version go.mod or bridge/go.mod requires
	for _, gomod := range []string{"go.mod", "bridge/go.mod"} {
		for path, version := range requirements(t, filepath.Join(repo, gomod)) {
			if semver.Compare(version, provider[path]) > 0 {
				provider[path] = version
			}
		}
	}
	// Modules a tool cannot build at the provider's version, and why.
	behind := map[string]string{
		// v1 changed its API; glamour v0.6.0, which the CLI's docs renderer uses, needs v0.0.x.
		"tools/pulumi github.com/olekukonko/tablewriter": "v0.0.5",
	}
	for _, dir := range []string{"tools/kubernetes", "tools/pulumi", "tools/opentofu", "tools/helm3"} {
		for path, version := range requirements(t, filepath.Join(repo, dir, "go.mod")) {
			if behind[dir+" "+path] == version {
				continue
			}
			if want, ok := provider[path]; ok && semver.Compare(version, want) < 0 {
				t.Errorf("%s/go.mod requires %s %s, below the %s the provider's modules require: run go mod edit -require=%s@%s there, then go mod tidy",
					dir, path, version, want, path, want)
			}
		}
	}
}

// requirements are the modules gomod requires and the versions it builds them
// at: a replace by another version of the same module counts as that version,
// and a module replaced by another module is left out.
func requirements(t *testing.T, gomod string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		switch {
		case r.New.Path != r.Old.Path:
			// A fork (tofu's hcl) is another module: nothing to share.
			delete(out, r.Old.Path)
		case r.New.Version != "":
			out[r.Old.Path] = r.New.Version
		}
	}
	return out
}

// The API server reports the version it is built as in /version, and Helm's
// .Capabilities.KubeVersion reads its minor from there: the stamped minor must
// be gitVersion's (it once said 36 for v1.37.2).
func TestKubeVersionStampAgrees(t *testing.T) {
	flags := strings.Join(kubeLDFlags(), " ")
	minor := strings.Split(strings.TrimPrefix(kubeVersion, "v"), ".")[1]
	if !strings.Contains(flags, "gitMinor="+minor+" ") || !strings.Contains(flags, "gitVersion="+kubeVersion+" ") {
		t.Errorf("the kube-apiserver build stamps %q, which disagrees with %s", flags, kubeVersion)
	}
}
