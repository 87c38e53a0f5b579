package cpuprofile_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
	"github.com/k8sconnect/k8sconnect/provider/plugin/cpuprofile"
)

// expectProfile checks that path holds a pprof profile: gzip-compressed, with
// at least the profile header (sample types, period) in it.
func expectProfile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not a gzip-compressed profile (%d bytes): %v", path, len(b), err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !bytes.Contains(raw, []byte("nanoseconds")) {
		t.Fatalf("%s holds no CPU profile header (%d bytes uncompressed)", path, len(raw))
	}
}

func TestStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "profiles") // Start makes it
	t.Setenv(cpuprofile.Env, dir)
	stop := cpuprofile.Start()
	stop()
	stop() // a second stop (a signal path and a defer) must not fail or rewrite
	want := filepath.Join(dir, filepath.Base(os.Args[0])+"-"+strconv.Itoa(os.Getpid())+".pprof")
	expectProfile(t, want)
}

func TestStartWithoutEnv(t *testing.T) {
	t.Setenv(cpuprofile.Env, "")
	wd := t.TempDir()
	t.Chdir(wd)
	cpuprofile.Start()()
	entries, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("Start without %s wrote %v", cpuprofile.Env, entries)
	}
}

// TestProfileAfterTerraform runs the real provider under terraform (validate:
// it starts the plugin, asks for its schema, validates a resource and shuts it
// down through go-plugin, with no cluster needed) and checks that the deferred
// stop in the plugin's main wrote a profile, i.e. that Serve returned.
func TestProfileAfterTerraform(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the provider and runs terraform")
	}
	terraform, err := toolchain.Path("terraform")
	if err != nil {
		t.Fatal(err)
	}
	root, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "./provider/cmd/terraform-provider-k8sconnect")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rc := filepath.Join(work, "cli.tfrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, "provider_installation {\n  dev_overrides {\n    \"registry.terraform.io/k8sconnect/k8sconnect\" = %q\n  }\n  direct {}\n}\n", bin), 0o600); err != nil {
		t.Fatal(err)
	}
	config := `terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
}
resource "k8sconnect_object" "cm" {
  yaml_body          = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n"
  cluster_connection = { kubeconfig_file = "/nonexistent" }
}
`
	tf := filepath.Join(work, "tf")
	if err := os.Mkdir(tf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tf, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	profiles := filepath.Join(work, "profiles")
	cmd := exec.Command(terraform, "validate", "-no-color")
	cmd.Dir = tf
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", cpuprofile.Env+"="+profiles)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform validate: %v\n%s", err, out)
	}
	files, err := filepath.Glob(filepath.Join(profiles, "terraform-provider-k8sconnect-*.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("terraform validate left no profile in %s", profiles)
	}
	for _, f := range files {
		expectProfile(t, f)
	}
}
