package sdkgen

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesAreCurrent regenerates the schema and the SDKs into a
// temporary tree and compares them with the committed ones: a change to the
// framework provider's schema or to the bridge configuration has to come with
// regenerated files.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := Files(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	if err := Write(tmp, files); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Diff(tmp, files); err != nil || len(diffs) > 0 {
		t.Fatalf("a fresh tree does not match what was generated (err %v): %v", err, diffs)
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("generated files are stale; run `cd bridge && go run ./cmd/k8sconnect-sdkgen` (make generate) "+
			"and commit the result:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// TestGoSDKBuilds compiles the committed Go SDK, its own module in sdk/go.
func TestGoSDKBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the Go SDK: not in -short")
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = filepath.Join("..", "..", "sdk", "go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./... in sdk/go: %v\n%s", err, out)
	}
}
