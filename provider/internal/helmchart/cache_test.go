package helmchart_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// cachedArchives lists the archives in the cache.
func cachedArchives(t *testing.T, cacheDir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Archives by digest or name end in .tgz; a chart URL's is kept
		// with its validators, under urls/.
		if !d.IsDir() && (strings.HasSuffix(p, ".tgz") || filepath.Base(filepath.Dir(p)) == "urls") {
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

// Without K8SCONNECT_HELM_CACHE_DIR the cache is the user's cache directory's
// k8sconnect/helm, and Helm's and Docker's own directories are neither
// written nor read: credentials stored there for a registry are not used.
func TestCacheLocationAndHelmsOwnFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("os.UserCacheDir follows XDG_CACHE_HOME and HOME on Linux only")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("DOCKER_CONFIG", "")
	t.Setenv(helmchart.CacheDirEnv, "")

	registry := registryWith(t, "app", "1.0.0")
	auth := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPassword))
	stored := `{"auths":{"` + registry.Host + `":{"auth":"` + auth + `"}}}`
	for _, p := range []string{".config/helm/registry/config.json", ".docker/config.json"} {
		if err := os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, p), []byte(stored), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	src := helmchart.Source{Chart: registry.Ref("charts", "app"), CAFile: registry.CAFile}
	assertContains(t, loadError(t, src), "requires credentials")

	src.Username, src.Password = testUser, testPassword
	mustLoad(t, src)
	assertCacheHolds(t, filepath.Join(home, ".cache", "k8sconnect", "helm"), 1)
	for _, p := range []string{".cache/helm", ".config/helm/repositories.yaml"} {
		if _, err := os.Stat(filepath.Join(home, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("~/%s exists after a load", p)
		}
	}
}

// Loads running at once (Terraform reads data sources in parallel, and
// several processes share the cache) all get the chart, and leave one whole
// archive in the cache and no partial files.
func TestCacheSharedByConcurrentLoads(t *testing.T) {
	cacheDir := isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			c, err := helmchart.Load(context.Background(), src)
			if err == nil && c.Version != "1.0.0" {
				err = fmt.Errorf("loaded %s", c.Version)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	assertCacheHolds(t, cacheDir, 1)
	err := filepath.WalkDir(cacheDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".partial-") {
			t.Errorf("a partial file was left: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A cache that cannot be written costs a download, not the load.
func TestCacheUnwritable(t *testing.T) {
	notADirectory := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADirectory, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(helmchart.CacheDirEnv, notADirectory)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app"}
	mustLoad(t, src)
	mustLoad(t, src)
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 2 {
		t.Fatalf("downloaded %d times without a cache, want 2", got)
	}
}

// age sets the modification time of the files to long ago.
func age(t *testing.T, by time.Duration, paths ...string) {
	t.Helper()
	then := time.Now().Add(-by)
	for _, p := range paths {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
}

// Entries unused for months, and partial files a dead process left, go at
// the next download (once a day at most); entries in use stay however old
// they are.
func TestCachePrunesWhatIsNotUsed(t *testing.T) {
	cacheDir := isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "used", "1.0.0")
	for _, name := range []string{"unused", "fresh", "trigger"} {
		repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart(name, "1.0.0")))
	}
	load := func(name string) { mustLoad(t, helmchart.Source{Repository: repo.URL, Chart: name}) }
	load("used")
	used := cachedArchives(t, cacheDir)
	load("unused")
	var unused []string
	for _, p := range cachedArchives(t, cacheDir) {
		if !slices.Contains(used, p) {
			unused = append(unused, p)
		}
	}
	partial := filepath.Join(cacheDir, "sha256", ".partial-123")
	if err := os.WriteFile(partial, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, 200*24*time.Hour, append(used, unused...)...)
	age(t, 2*time.Hour, partial)
	load("used") // a use: its entry is young again

	// A prune ran today (the first download made the marker): no prune yet.
	load("fresh")
	assertCacheHolds(t, cacheDir, 3)

	age(t, 25*time.Hour, filepath.Join(cacheDir, ".last-pruned"))
	load("trigger")
	remaining := cachedArchives(t, cacheDir)
	if len(remaining) != 3 || slices.Contains(remaining, unused[0]) || !slices.Contains(remaining, used[0]) {
		t.Fatalf("after pruning the cache holds %v; want used, fresh and trigger, not %v", remaining, unused)
	}
	if _, err := os.Stat(partial); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("an old partial file survived the prune")
	}
}
