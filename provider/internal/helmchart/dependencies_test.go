package helmchart_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// listing is every file and directory under dir with its mode, size,
// modification time and content hash: what a load must leave as it was.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + info.Mode().String() + " " + info.ModTime().UTC().Format(time.RFC3339Nano)
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// parentChart writes a chart "parent" depending on deps into a directory of
// its own, with lock as its Chart.lock if not nil.
func parentChart(t *testing.T, lock *chart.Lock, deps ...*chart.Dependency) string {
	t.Helper()
	dir, err := chartrepo.WriteDir(chartrepo.Chart("parent", "0.1.0", deps...), t.TempDir(), lock)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func subchartVersions(c *helmchart.Chart) map[string]string {
	versions := map[string]string{}
	for _, sub := range c.Dependencies() {
		versions[sub.Name()] = sub.Metadata.Version
	}
	return versions
}

func TestDependenciesFromRanges(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0", "1.1.0", "2.0.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL})
	before := listing(t, dir)

	c := mustLoad(t, helmchart.Source{Chart: dir})
	if got := subchartVersions(c); got["child"] != "1.1.0" || len(got) != 1 {
		t.Fatalf("subcharts %v, want child 1.1.0", got)
	}
	if c.Version != "0.1.0" {
		t.Fatalf("the parent's version is %s", c.Version)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("loading changed the chart directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestDependenciesFromLock(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0", "1.1.0", "2.0.0")
	dep := &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL}
	lock := &chart.Lock{
		Generated:    time.Unix(0, 0),
		Digest:       "sha256:not-checked-by-k8sconnect",
		Dependencies: []*chart.Dependency{{Name: "child", Version: "1.0.0", Repository: repo.URL}},
	}
	dir := parentChart(t, lock, dep)
	before := listing(t, dir)

	c := mustLoad(t, helmchart.Source{Chart: dir})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0 as locked", got)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("loading changed the chart directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// A second load finds the archive in the cache.
	mustLoad(t, helmchart.Source{Chart: dir})
	if got := repo.Count("/charts/child-1.0.0.tgz"); got != 1 {
		t.Fatalf("the dependency was downloaded %d times, want 1", got)
	}
}

func TestDependenciesOCI(t *testing.T) {
	isolatedCache(t)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{})
	for _, v := range []string{"0.1.0", "0.2.0", "1.0.0"} {
		registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", v)))
	}
	dir := parentChart(t, nil, &chart.Dependency{Name: "ocichild", Version: "~0.1", Repository: "oci://" + registry.Host + "/charts"})
	c := mustLoad(t, helmchart.Source{Chart: dir, CAFile: registry.CAFile})
	if got := subchartVersions(c); got["ocichild"] != "0.1.0" {
		t.Fatalf("subcharts %v, want ocichild 0.1.0", got)
	}
}

// What charts/ holds is used as it is when the range allows it, as helm
// install would, even if Chart.lock is stale; a copy at a version outside
// the range is replaced by the locked version.
func TestDependenciesInChartsDirectory(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "0.9.0", "1.0.0", "1.1.0")
	dep := &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL}
	withChild := func(version string, lock *chart.Lock) string {
		parent := chartrepo.Chart("parent", "0.1.0", dep)
		parent.AddDependency(chartrepo.Chart("child", version))
		dir, err := chartrepo.WriteDir(parent, t.TempDir(), lock)
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}

	staleLock := &chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "0.9.0", Repository: repo.URL}}}
	dir := withChild("1.0.0", staleLock)
	before := listing(t, dir)
	c := mustLoad(t, helmchart.Source{Chart: dir})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want the child 1.0.0 in charts/", got)
	}
	if got := len(repo.Requests()); got != 0 {
		t.Fatalf("a chart with its dependency in charts/ made %d requests", got)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("loading changed the chart directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	lock := &chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "1.1.0", Repository: repo.URL}}}
	dir = withChild("0.9.0", lock)
	before = listing(t, dir)
	c = mustLoad(t, helmchart.Source{Chart: dir})
	if got := subchartVersions(c); got["child"] != "1.1.0" || len(c.Dependencies()) != 1 {
		t.Fatalf("subcharts %v, want only child 1.1.0 as locked", got)
	}
	if after := listing(t, dir); after != before {
		t.Fatalf("loading changed the chart directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// One chart declared twice under aliases, at two ranges, is fetched at both.
func TestDependenciesAliases(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0", "2.0.0")
	dir := parentChart(t, nil,
		&chart.Dependency{Name: "child", Alias: "old", Version: "^1", Repository: repo.URL},
		&chart.Dependency{Name: "child", Alias: "new", Version: "^2", Repository: repo.URL},
		&chart.Dependency{Name: "child", Alias: "again", Version: "^2", Repository: repo.URL})
	c := mustLoad(t, helmchart.Source{Chart: dir})
	var versions []string
	for _, sub := range c.Dependencies() {
		versions = append(versions, sub.Metadata.Version)
	}
	sort.Strings(versions)
	if !slices.Equal(versions, []string{"1.0.0", "2.0.0"}) {
		t.Fatalf("subchart versions %v, want 1.0.0 and 2.0.0", versions)
	}
	if got := repo.Count("/charts/child-2.0.0.tgz"); got != 1 {
		t.Fatalf("child 2.0.0 was downloaded %d times, want 1", got)
	}
}

func TestDependenciesFromFile(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "grandchild", "3.0.0")
	root := t.TempDir()
	if _, err := chartrepo.WriteDir(chartrepo.Chart("sibling", "0.5.0",
		&chart.Dependency{Name: "grandchild", Version: "3.x", Repository: repo.URL}), root, nil); err != nil {
		t.Fatal(err)
	}
	dir, err := chartrepo.WriteDir(chartrepo.Chart("parent", "0.1.0",
		&chart.Dependency{Name: "sibling", Version: "0.5.0", Repository: "file://../sibling"}), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := listing(t, root)
	c := mustLoad(t, helmchart.Source{Chart: dir})
	sibling := c.Dependencies()
	if len(sibling) != 1 || sibling[0].Name() != "sibling" {
		t.Fatalf("subcharts %v, want sibling", subchartVersions(c))
	}
	if deps := sibling[0].Dependencies(); len(deps) != 1 || deps[0].Metadata.Version != "3.0.0" {
		t.Fatal("the file:// dependency's own dependency was not built")
	}
	if after := listing(t, root); after != before {
		t.Fatalf("loading changed the charts' directories:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestDependencyErrors(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0", "1.1.0")

	outOfSync := parentChart(t,
		&chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "1.0.0", Repository: repo.URL}}},
		&chart.Dependency{Name: "child", Version: "^1.1.0", Repository: repo.URL})
	assertContains(t, loadError(t, helmchart.Source{Chart: outOfSync}), "Chart.lock", "out of sync", "helm dependency update")

	unlocked := parentChart(t,
		&chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "1.0.0", Repository: repo.URL}}},
		&chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL},
		&chart.Dependency{Name: "other", Version: "1.0.0", Repository: repo.URL})
	assertContains(t, loadError(t, helmchart.Source{Chart: unlocked}), "out of sync", "other")

	alias := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: "@stable"})
	assertContains(t, loadError(t, helmchart.Source{Chart: alias}), "repositories.yaml", "write the repository's URL")

	nowhere := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0"})
	assertContains(t, loadError(t, helmchart.Source{Chart: nowhere}), "no repository", "charts")

	noMatch := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "^5", Repository: repo.URL})
	assertContains(t, loadError(t, helmchart.Source{Chart: noMatch}), `dependency "child"`, `"^5"`, "1.1.0, 1.0.0")

	cycle := t.TempDir()
	if _, err := chartrepo.WriteDir(chartrepo.Chart("a", "1.0.0", &chart.Dependency{Name: "b", Repository: "file://../b"}), cycle, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := chartrepo.WriteDir(chartrepo.Chart("b", "1.0.0", &chart.Dependency{Name: "a", Repository: "file://../a"}), cycle, nil); err != nil {
		t.Fatal(err)
	}
	assertContains(t, loadError(t, helmchart.Source{Chart: filepath.Join(cycle, "a")}), "depends on itself")
}

// The Source's username and password belong to its repository; a local
// chart's Chart.yaml may name any host, which must not receive them.
func TestDependenciesGetNoCredentials(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})
	mustLoad(t, helmchart.Source{Chart: dir, Username: testUser, Password: testPassword})
	for _, r := range repo.Requests() {
		if r.Authorization {
			t.Errorf("the dependency's repository got credentials with %s", r.Path)
		}
	}
}

// A packaged chart with dependencies missing from it is completed too.
func TestDependenciesOfAnArchive(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0")
	archive := chartrepo.MustPackage(t, chartrepo.Chart("parent", "0.1.0", &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL}))
	path := filepath.Join(t.TempDir(), "parent-0.1.0.tgz")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, helmchart.Source{Chart: path})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0", got)
	}
}

// A chart completed in memory renders its dependencies' templates, as it
// would from a charts/ directory filled by helm dependency build.
func TestDependenciesRender(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})
	c := mustLoad(t, helmchart.Source{Chart: dir})
	rendered, err := helmchart.Render(context.Background(), c, nil, helmchart.Release{Name: "r", Namespace: "ns"}, nil)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var paths []string
	for _, f := range rendered.Files {
		paths = append(paths, f.Path)
	}
	sort.Strings(paths)
	want := []string{"parent/charts/child/templates/configmap.yaml", "parent/templates/configmap.yaml"}
	if !slices.Equal(paths, want) {
		t.Fatalf("rendered %v, want %v", paths, want)
	}
}

func TestDependencyFileMissing(t *testing.T) {
	isolatedCache(t)
	dir := parentChart(t, nil, &chart.Dependency{Name: "gone", Version: "1.0.0", Repository: "file://../gone"})
	assertContains(t, loadError(t, helmchart.Source{Chart: dir}), `dependency "gone"`, "file://../gone", "no such file or directory")
}
