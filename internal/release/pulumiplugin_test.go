package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestPulumiPluginArchiveName(t *testing.T) {
	// The engine's download name for a github:// plugin URL.
	const want = "pulumi-resource-k8sconnect-v0.1.0-dev-linux-amd64.tar.gz"
	for _, v := range []string{"0.1.0-dev", "v0.1.0-dev"} {
		if got := PulumiPluginArchiveName(v, "linux", "amd64"); got != want {
			t.Errorf("PulumiPluginArchiveName(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestWritePulumiPluginArchive(t *testing.T) {
	repo := t.TempDir()
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "LICENSE"), "the license", 0o644)
	write(filepath.Join(repo, "README.md"), "the readme", 0o644)
	plugin := filepath.Join(t.TempDir(), "built-plugin")
	write(plugin, "#!/bin/sh\necho plugin\n", 0o755)

	out := t.TempDir()
	first := filepath.Join(out, "first.tar.gz")
	if err := WritePulumiPluginArchive(first, plugin, repo); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		content string
		mode    int64
	}
	want := map[string]entry{
		PulumiPlugin: {"#!/bin/sh\necho plugin\n", 0o755},
		"LICENSE":    {"the license", 0o644},
		"README.md":  {"the readme", 0o644},
	}
	got := map[string]entry{}
	f, err := os.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[hdr.Name] = entry{string(b), hdr.Mode}
	}
	if len(got) != len(want) {
		t.Errorf("archive entries %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("entry %s = %+v, want %+v", name, got[name], w)
		}
	}

	if st, err := os.Stat(first); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("archive mode %v, want -rw-r--r--", st.Mode())
	}

	// The same inputs make the same bytes.
	second := filepath.Join(out, "second.tar.gz")
	if err := WritePulumiPluginArchive(second, plugin, repo); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same inputs differ")
	}

	// A missing input fails and leaves nothing behind.
	if err := os.Remove(filepath.Join(repo, "LICENSE")); err != nil {
		t.Fatal(err)
	}
	if err := WritePulumiPluginArchive(filepath.Join(out, "third.tar.gz"), plugin, repo); err == nil {
		t.Error("an archive without LICENSE: no error")
	}
	if left, _ := filepath.Glob(filepath.Join(out, "*third*")); len(left) != 0 {
		t.Errorf("a failed write left %v", left)
	}
}

// A Windows plugin keeps its .exe in the archive: the engine runs
// pulumi-resource-k8sconnect.exe there.
func TestWritePulumiPluginArchiveWindows(t *testing.T) {
	repo := t.TempDir()
	for _, f := range PulumiPluginArchiveFiles {
		if err := os.WriteFile(filepath.Join(repo, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plugin := filepath.Join(t.TempDir(), PulumiPlugin+".exe")
	if err := os.WriteFile(plugin, []byte("MZ"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "plugin.tar.gz")
	if err := WritePulumiPluginArchive(archive, plugin, repo); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := tar.NewReader(gz).Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != PulumiPlugin+".exe" {
		t.Errorf("first entry %q, want %s.exe", hdr.Name, PulumiPlugin)
	}
}
