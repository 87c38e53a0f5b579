package helmchart_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cachedArchives lists the archives in the cache.
func cachedArchives(t *testing.T, cacheDir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tgz") {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func assertCacheHolds(t *testing.T, cacheDir string, n int) {
	t.Helper()
	if got := cachedArchives(t, cacheDir); len(got) != n {
		t.Fatalf("the cache holds %d archives, want %d: %v", len(got), n, got)
	}
}

func corruptCache(t *testing.T, cacheDir string) {
	t.Helper()
	archives := cachedArchives(t, cacheDir)
	if len(archives) == 0 {
		t.Fatal("nothing cached to corrupt")
	}
	for _, p := range archives {
		if err := os.WriteFile(p, []byte("not a chart"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
