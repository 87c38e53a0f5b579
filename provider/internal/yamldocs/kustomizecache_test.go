package yamldocs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/k8sconnect/k8sconnect/internal/testing/vendorfiles"
)

// build is FromKustomize, failing the test on an error, with whether it ran
// kustomize (true) or took a kept build.
func build(t *testing.T, dir string, k Kustomize) (docs []Document, ran bool) {
	t.Helper()
	before := kustomizeRuns.Load()
	docs, err := FromKustomize(dir, k)
	if err != nil {
		t.Fatal(err)
	}
	return docs, kustomizeRuns.Load() != before
}

func textOf(docs []Document) string {
	var b strings.Builder
	for _, d := range docs {
		b.WriteString(d.Text)
		b.WriteString("\n---\n")
	}
	return b.String()
}

// A build of the same kustomization with the same settings is taken from
// the last one while every file and directory it read reads the same; any
// change a user makes on disk builds again and is seen.
func TestKustomizeBuildKeptWhileTheDiskAnswersTheSame(t *testing.T) {
	built.reset()
	overlay := writeKustomization(t)
	base := filepath.Join(filepath.Dir(overlay), "base")
	first, ran := build(t, overlay, Kustomize{})
	if !ran {
		t.Fatal("the first build was not run")
	}
	again, ran := build(t, overlay, Kustomize{})
	if ran || textOf(again) != textOf(first) {
		t.Fatalf("the same kustomization, nothing changed: ran again %v, same documents %v", ran, textOf(again) == textOf(first))
	}
	// Through a relative path, the same directory.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(overlay))
	if _, ran := build(t, "overlay", Kustomize{}); ran {
		t.Error("the same directory by a relative path built again")
	}
	t.Chdir(wd)

	// A kept result handed out is the caller's: changing it changes no
	// later answer.
	again[0].Text = "changed by a caller"
	if later, _ := build(t, overlay, Kustomize{}); textOf(later) != textOf(first) {
		t.Fatal("a caller's change to its documents reached the kept build")
	}

	steps := []struct {
		what   string
		change func()
		want   string // in the build after the change
	}{
		{"a resource file of the base edited", func() {
			write(t, base, "configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: \"2\"\n")
		}, `a: "2"`},
		{"the overlay's patch edited", func() {
			write(t, overlay, "replicas.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n")
		}, "replicas: 5"},
		{"a resource added to the base's kustomization", func() {
			write(t, base, "secret.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n")
			write(t, base, "kustomization.yaml", "resources:\n- deployment.yaml\n- configmap.yaml\n- secret.yaml\n")
		}, "name: prod-added"},
		{"the kustomization file renamed to kustomization.yml", func() {
			if err := os.Rename(filepath.Join(base, "kustomization.yaml"), filepath.Join(base, "kustomization.yml")); err != nil {
				t.Fatal(err)
			}
		}, "name: prod-added"},
		{"a file the same size, one byte changed", func() {
			write(t, base, "secret.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addes\n")
		}, "name: prod-addes"},
	}
	for _, s := range steps {
		s.change()
		docs, ran := build(t, overlay, Kustomize{})
		if !ran || !strings.Contains(textOf(docs), s.want) {
			t.Errorf("%s: ran %v, want %q in:\n%s", s.what, ran, s.want, textOf(docs))
		}
		if _, ran := build(t, overlay, Kustomize{}); ran {
			t.Errorf("%s, then nothing: built again", s.what)
		}
	}

	// A removed file is kustomize's error, not the kept build.
	if err := os.Remove(filepath.Join(base, "secret.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := FromKustomize(overlay, Kustomize{}); err == nil || !strings.Contains(err.Error(), "secret.yaml") {
		t.Errorf("a resource file removed: want kustomize's error naming it, got %v", err)
	}
}

// Settings are part of what is kept: a build with other settings is its own.
func TestKustomizeBuildKeptPerSettings(t *testing.T) {
	built.reset()
	dir := filepath.Join(t.TempDir(), "app")
	write(t, dir, "kustomization.yaml", "resources:\n- ../shared/namespace.yaml\n")
	write(t, filepath.Dir(dir), "shared/namespace.yaml", namespace)
	none := Kustomize{LoadRestrictor: "LoadRestrictionsNone"}
	if _, ran := build(t, dir, none); !ran {
		t.Fatal("the first build was not run")
	}
	if _, err := FromKustomize(dir, Kustomize{}); err == nil {
		t.Fatal("the default load restrictor took the build of LoadRestrictionsNone")
	}
	if _, ran := build(t, dir, none); ran {
		t.Error("LoadRestrictionsNone again, after a failed build with other settings: built again")
	}
	// A file outside the kustomization's directory is read, and watched.
	write(t, filepath.Dir(dir), "shared/namespace.yaml", strings.Replace(namespace, "name: ", "name: other-", 1))
	if docs, ran := build(t, dir, none); !ran || !strings.Contains(textOf(docs), "name: other-") {
		t.Errorf("a file outside the directory edited: ran %v\n%s", ran, textOf(docs))
	}
}

// A build that wrote to the disk or read it past what is recorded is not
// kept.
func TestRecordingFSRefusesWhatItCannotAskAgain(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", namespace)
	for name, use := range map[string]func(fs filesys.FileSystem){
		"Open":      func(fs filesys.FileSystem) { f, _ := fs.Open(filepath.Join(dir, "a.yaml")); _ = f.Close() },
		"Walk":      func(fs filesys.FileSystem) { _ = fs.Walk(dir, func(string, os.FileInfo, error) error { return nil }) },
		"WriteFile": func(fs filesys.FileSystem) { _ = fs.WriteFile(filepath.Join(dir, "b.yaml"), nil) },
		"MkdirAll":  func(fs filesys.FileSystem) { _ = fs.MkdirAll(filepath.Join(dir, "charts")) },
		"RemoveAll": func(fs filesys.FileSystem) { _ = fs.RemoveAll(filepath.Join(dir, "charts")) },
	} {
		r := &recordingFS{FileSystem: filesys.MakeFsOnDisk()}
		if _, err := r.ReadFile(filepath.Join(dir, "a.yaml")); err != nil {
			t.Fatal(err)
		}
		use(r)
		if _, ok := r.recorded(); ok {
			t.Errorf("%s: the build may be kept", name)
		}
	}
	r := &recordingFS{FileSystem: filesys.MakeFsOnDisk()}
	_, _ = r.ReadFile(filepath.Join(dir, "a.yaml"))
	_, _ = r.ReadFile(filepath.Join(dir, "missing.yaml"))
	r.Exists(filepath.Join(dir, "a.yaml"))
	answers, ok := r.recorded()
	if !ok || len(answers) != 3 {
		t.Fatalf("reads only: kept %v with %d answers, want 3", ok, len(answers))
	}
	for _, a := range answers {
		if !a.holds(filesys.MakeFsOnDisk()) {
			t.Errorf("%s %s does not hold on an unchanged disk", a.op, a.path)
		}
	}
	write(t, dir, "missing.yaml", namespace)
	if held := slices.IndexFunc(answers, func(a diskAnswer) bool { return !a.holds(filesys.MakeFsOnDisk()) }); held < 0 {
		t.Error("a file that did not exist and now does: every answer still holds")
	}
}

// Argo CD's install.yaml behind an overlay, as its docs suggest: the second
// build is taken from the first (kustomize reads the disk only in ways that
// can be asked again), at a fraction of its CPU.
func TestKustomizeBuildKeptForArgoCD(t *testing.T) {
	built.reset()
	dir := t.TempDir()
	write(t, dir, "install.yaml", string(vendorfiles.ArgoCDInstall.Read(t)))
	write(t, dir, "kustomization.yaml", "namespace: argocd\nresources:\n- install.yaml\n"+
		"patches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: argocd-cmd-params-cm\n"+
		"    data:\n      server.insecure: \"true\"\n")
	start := CPUTime()
	first, ran := build(t, dir, Kustomize{})
	buildCPU := CPUTime() - start
	if !ran || len(first) != 59 {
		t.Fatalf("the first build: ran %v, %d documents, want 59", ran, len(first))
	}
	start = CPUTime()
	again, ran := build(t, dir, Kustomize{})
	keptCPU := CPUTime() - start
	if ran || textOf(again) != textOf(first) {
		t.Fatalf("the second build ran again (%v) or differs", ran)
	}
	t.Logf("build %s CPU, kept %s", buildCPU, keptCPU)
}
