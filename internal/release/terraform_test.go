package release

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/k8sconnect/k8sconnect"
)

func TestTerraformNames(t *testing.T) {
	// The names the Terraform Registry and a packed filesystem mirror expect.
	p := Platform{"windows", "arm64"}
	for got, want := range map[string]string{
		TerraformZipName("1.2.3-rc.1", p):    "terraform-provider-k8sconnect_1.2.3-rc.1_windows_arm64.zip",
		TerraformSumsName("1.2.3-rc.1"):      "terraform-provider-k8sconnect_1.2.3-rc.1_SHA256SUMS",
		TerraformManifestName("1.2.3-rc.1"):  "terraform-provider-k8sconnect_1.2.3-rc.1_manifest.json",
		p.exe(TerraformProvider + "_v1.2.3"): "terraform-provider-k8sconnect_v1.2.3.exe",
		Platform{"linux", "amd64"}.exe("x"):  "x",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestWriteTerraformZip(t *testing.T) {
	dir := t.TempDir()
	provider := filepath.Join(dir, "terraform-provider-k8sconnect_v1.2.3")
	if err := os.WriteFile(provider, []byte("the provider"), 0o700); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.zip")
	if err := WriteTerraformZip(first, provider); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(first)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		t.Fatalf("zip entries %d, want 1", len(zr.File))
	}
	f := zr.File[0]
	if f.Name != "terraform-provider-k8sconnect_v1.2.3" || f.Mode().Perm() != 0o755 {
		t.Errorf("entry %s %v, want terraform-provider-k8sconnect_v1.2.3 -rwxr-xr-x", f.Name, f.Mode())
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "the provider" {
		t.Errorf("entry content %q", b)
	}
	second := filepath.Join(dir, "second.zip")
	if err := WriteTerraformZip(second, provider); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first)
	c, _ := os.ReadFile(second)
	if !bytes.Equal(a, c) {
		t.Error("two zips of the same provider differ")
	}
}

// TestWriteSHA256Sums checks the checksum file with sha256sum itself, as a
// user verifies a download.
func TestWriteSHA256Sums(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for name, content := range map[string]string{"b.zip": "bee", "a.zip": "ay"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	sums := filepath.Join(dir, "SHA256SUMS")
	if err := WriteSHA256Sums(sums, files); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(sums)
	if lines := bytes.Split(bytes.TrimSpace(got), []byte("\n")); len(lines) != 2 || !bytes.HasSuffix(lines[0], []byte("  a.zip")) {
		t.Errorf("SHA256SUMS: want two lines sorted by name, a.zip first:\n%s", got)
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum")
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum --check: %v\n%s", err, out)
	}
	if err := os.WriteFile(files[0], []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("sha256sum --check passed a changed file:\n%s", out)
	}
}

func TestParsePlatforms(t *testing.T) {
	if ps, err := ParsePlatforms("all"); err != nil || len(ps) != 6 {
		t.Errorf("all: %v %v", ps, err)
	}
	if ps, err := ParsePlatforms("host"); err != nil || len(ps) != 1 || ps[0] != HostPlatform() {
		t.Errorf("host: %v %v", ps, err)
	}
	if ps, err := ParsePlatforms("linux/arm64, darwin/amd64"); err != nil || len(ps) != 2 || ps[1] != (Platform{"darwin", "amd64"}) {
		t.Errorf("a list: %v %v", ps, err)
	}
	if _, err := ParsePlatforms("linux"); err == nil {
		t.Error("linux without an arch: no error")
	}
}

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"1.2.3", "0.1.0-dev.0", "1.0.0-rc.1"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"v1.2.3", "1.2", "0.1.0+dev", "0.1.0.dev0", ""} {
		if err := CheckVersion(v); err == nil {
			t.Errorf("%s: no error", v)
		}
	}
}

// The release is built from the committed SDKs, which must carry the release
// version; this repository's carry the VERSION file's.
func TestCheckSDKVersions(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSDKVersions(repo, k8sconnect.Version); err != nil {
		t.Errorf("the committed SDKs and VERSION disagree: %v", err)
	}
	if err := checkSDKVersions(repo, k8sconnect.Version+"1"); err == nil {
		t.Error("a release of another version than the SDKs': no error")
	}
}
