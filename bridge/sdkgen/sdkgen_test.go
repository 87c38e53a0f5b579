package sdkgen

import (
	"context"
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
		t.Fatalf("generated files are stale; run `go run ./bridge/cmd/k8sconnect-sdkgen` (make generate) "+
			"from the repository root and commit the result:\n  %s", strings.Join(diffs, "\n  "))
	}
}
