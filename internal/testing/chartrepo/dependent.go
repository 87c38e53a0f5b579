package chartrepo

import (
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// LocalChart writes Chart(name, "0.1.0", deps...) as a chart directory of
// its own, its charts/ directory empty, and returns the directory: a chart
// on disk whose dependencies are fetched when it is loaded.
func LocalChart(t testing.TB, name string, deps ...*chart.Dependency) string {
	t.Helper()
	dir, err := WriteDir(Chart(name, "0.1.0", deps...), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// ProtectedDependency is the case of a local chart whose dependency is in a
// private repository, which the acceptance tests of dependency_repositories
// share (helm_release's, helm_template's).
type ProtectedDependency struct {
	// Repository is an HTTP repository behind basic auth (Username and the
	// password given) holding the dependency, chart "child" 1.0.0.
	Repository *Repository
	Username   string
	// ChartDir is the local chart (LocalChart) depending on child ^1.0.0
	// from Repository, which it renders as the ConfigMap RELEASE-child.
	ChartDir string
}

// NewProtectedDependency starts the repository and writes the chart, named
// chartName.
func NewProtectedDependency(t testing.TB, chartName, username, password string) *ProtectedDependency {
	t.Helper()
	repo := NewRepository(t, Options{Username: username, Password: password})
	repo.Add(t, MustPackage(t, Chart("child", "1.0.0")))
	return &ProtectedDependency{
		Repository: repo,
		Username:   username,
		ChartDir:   LocalChart(t, chartName, &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL}),
	}
}
