package helmchart

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// maxDependencyDepth bounds file:// dependencies of file:// dependencies.
const maxDependencyDepth = 10

// dependencyBuilder completes a local chart whose Chart.yaml declares
// dependencies its charts/ directory does not hold (or holds at a version
// outside the range), as `helm dependency build` would: the versions
// Chart.lock pins, or without a lock the newest that Chart.yaml's ranges
// allow, from each dependency's repository.
//
// It builds in memory and writes nothing into the chart's directory: a plan
// must not modify the user's files, and a chart may sit in a read-only
// checkout or be shared by several configurations planned at once. The
// downloaded archives go to the cache (cache.go) like any remote chart, and
// the subcharts are attached to the loaded chart, which is all rendering
// reads. A copy of the chart directory with a filled charts/ would have
// cost a copy of the user's files and its cleaning up, for nothing.
type dependencyBuilder struct {
	// chart is the Source of the chart being completed. Its TLS files, its
	// PlainHTTP (for oci:// dependencies) and its DependencyRepositories
	// decide how each dependency's repository is reached (reach); its own
	// credentials go only to a dependency on origin.
	chart Source
	// origin is the chart's own repository or URL (scheme, host and port),
	// nil for a chart on disk.
	origin *url.URL
	// building holds the local charts being completed, to catch a file://
	// cycle.
	building map[string]bool
}

// complete adds the missing dependencies of c, loaded from chartPath.
func (b *dependencyBuilder) complete(ctx context.Context, c *chart.Chart, chartPath string, depth int) error {
	declared := c.Metadata.Dependencies
	if len(declared) == 0 {
		return nil
	}
	if depth > maxDependencyDepth {
		return fmt.Errorf("chart %q: file:// dependencies nest more than %d deep", chartPath, maxDependencyDepth)
	}
	abs, _ := filepath.Abs(chartPath)
	if b.building[abs] {
		return fmt.Errorf("chart %q depends on itself through file:// dependencies", chartPath)
	}
	b.building[abs] = true
	defer delete(b.building, abs)

	// What charts/ holds is used as helm install would use it; only what is
	// not there, or is at a version outside the range, is built. So a chart
	// that carries its dependencies loads as it is, even with a stale lock.
	var missing []int
	for i, dep := range declared {
		if dep != nil && !hasSubchart(c, dep.Name, dep.Version) {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var locked []string
	if !b.chart.DependencyUpdate {
		var err error
		if locked, err = lockedVersions(c, chartPath); err != nil {
			return err
		}
	}
	fetched := map[string]bool{}
	for _, i := range missing {
		dep := declared[i]
		want := dep.Version
		if locked != nil {
			want = locked[i]
		}
		// Aliases declare one chart several times; it is fetched once.
		key := dep.Name + "\x00" + dep.Repository + "\x00" + want
		if fetched[key] {
			continue
		}
		fetched[key] = true
		sub, err := b.fetch(ctx, dep, want, chartPath, depth)
		if err != nil {
			return fmt.Errorf("chart %q, dependency %q: %w", c.Metadata.Name, dep.Name, err)
		}
		replaceSubchart(c, sub)
	}
	return nil
}

// lockedVersions is the version Chart.lock pins for each of Chart.yaml's
// dependencies (by index), or nil when the chart has no Chart.lock.
//
// Helm compares a hash of Chart.yaml's dependencies with the one in the
// lock; that hash is internal to Helm, so the lock is checked for what makes
// it usable instead: every dependency is there, from the same repository,
// at a version its range allows.
func lockedVersions(c *chart.Chart, chartPath string) ([]string, error) {
	if c.Lock == nil {
		return nil, nil
	}
	outOfSync := func(why string) error {
		return fmt.Errorf("chart %q: its Chart.lock is out of sync with its Chart.yaml (%s): run `helm dependency update` on the chart, or delete Chart.lock", chartPath, why)
	}
	versions := make([]string, len(c.Metadata.Dependencies))
	used := make([]bool, len(c.Lock.Dependencies))
	for i, dep := range c.Metadata.Dependencies {
		if dep == nil {
			continue
		}
		found := false
		for j, l := range c.Lock.Dependencies {
			if l == nil || used[j] || l.Name != dep.Name || !sameRepository(l.Repository, dep.Repository) {
				continue
			}
			if !versionAllows(dep.Version, l.Version) {
				return nil, outOfSync(fmt.Sprintf("it locks %s %s, outside %q", dep.Name, l.Version, dep.Version))
			}
			versions[i], used[j], found = l.Version, true, true
			break
		}
		if !found {
			return nil, outOfSync(fmt.Sprintf("%s from %s is not in the lock", dep.Name, dep.Repository))
		}
	}
	return versions, nil
}

func sameRepository(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// versionAllows reports whether version satisfies the range (empty: any).
func versionAllows(constraint, version string) bool {
	if constraint == "" || constraint == version {
		return true
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	return err == nil && c.Check(v)
}

// hasSubchart reports whether charts/ already holds the chart at a version
// the range allows.
func hasSubchart(c *chart.Chart, name, constraint string) bool {
	for _, sub := range c.Dependencies() {
		if sub.Name() == name && versionAllows(constraint, sub.Metadata.Version) {
			return true
		}
	}
	return false
}

// replaceSubchart adds sub, dropping the copies of the same chart in
// charts/ that no dependency of that name allows, as helm dependency build
// replaces the archives in charts/.
func replaceSubchart(c *chart.Chart, sub *chart.Chart) {
	allowed := func(existing *chart.Chart) bool {
		for _, dep := range c.Metadata.Dependencies {
			if dep != nil && dep.Name == existing.Name() && versionAllows(dep.Version, existing.Metadata.Version) {
				return true
			}
		}
		return false
	}
	kept := make([]*chart.Chart, 0, len(c.Dependencies())+1)
	for _, existing := range c.Dependencies() {
		if existing.Name() != sub.Name() || allowed(existing) {
			kept = append(kept, existing)
		}
	}
	c.SetDependencies(append(kept, sub)...)
}

// fetch gets one dependency from where Chart.yaml says it is.
func (b *dependencyBuilder) fetch(ctx context.Context, dep *chart.Dependency, want, chartPath string, depth int) (*chart.Chart, error) {
	repository := dep.Repository
	switch {
	case repository == "":
		return nil, fmt.Errorf("it has no repository and is not in %s", chartsDir(chartPath))
	case strings.HasPrefix(repository, "@") || strings.HasPrefix(repository, "alias:"):
		return nil, fmt.Errorf("its repository %q is a name from Helm's repositories.yaml, which k8sconnect does not read: write the repository's URL in Chart.yaml", repository)
	case strings.HasPrefix(repository, "file://"):
		return b.fetchFile(ctx, dep, want, chartPath, depth)
	}
	src := Source{Chart: dep.Name, Repository: repository, Version: want, PlainHTTP: b.chart.PlainHTTP && isOCI(repository)}
	src, secrets, err := normalise(src)
	if err != nil {
		return nil, redact(err, secrets)
	}
	src = b.reach(src)
	secrets = append(secrets, src.Password)
	var loaded *Chart
	switch {
	case isOCI(repository):
		loaded, err = loadOCI(ctx, src)
	case strings.HasPrefix(repository, "http://") || strings.HasPrefix(repository, "https://"):
		loaded, err = loadFromRepository(ctx, src)
	default:
		return nil, fmt.Errorf("its repository %q is not an http(s)://, oci:// or file:// URL", repository)
	}
	if err != nil {
		return nil, redact(err, secrets)
	}
	return loaded.Chart, nil
}

// fetchFile loads a file:// dependency, a chart directory relative to the
// chart's own, and completes its dependencies in turn.
func (b *dependencyBuilder) fetchFile(ctx context.Context, dep *chart.Dependency, want, chartPath string, depth int) (*chart.Chart, error) {
	// A downloaded chart's path is its URL, never a directory here, even if
	// a directory of that name happened to exist.
	if info, err := os.Stat(chartPath); isChartURL(chartPath) || err != nil || !info.IsDir() {
		return nil, errors.New("a file:// dependency is relative to a chart directory, and this chart is an archive: package it with its dependencies in charts/")
	}
	target := strings.TrimPrefix(dep.Repository, "file://")
	if !filepath.IsAbs(target) {
		target = filepath.Join(chartPath, target)
	}
	if _, err := os.Stat(target); err != nil {
		return nil, fmt.Errorf("%s: %w", dep.Repository, err)
	}
	sub, err := readLocalChart(target)
	if err != nil {
		return nil, err
	}
	if sub.Metadata.Version != want && !versionAllows(want, sub.Metadata.Version) {
		return nil, fmt.Errorf("%s is version %s, which %q does not allow", dep.Repository, sub.Metadata.Version, want)
	}
	if err := b.complete(ctx, sub, target, depth+1); err != nil {
		return nil, err
	}
	return sub, nil
}

// chartsDir names the charts/ directory of the chart at chartPath, for
// errors: a downloaded chart's path is its URL, which filepath.Join would
// mangle (https:/host/...).
func chartsDir(chartPath string) string {
	if isChartURL(chartPath) {
		return "the charts/ directory of " + chartPath
	}
	return filepath.Join(chartPath, "charts")
}
