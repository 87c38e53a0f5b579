package helmchart_test

import (
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// assertLacks fails when msg says any of parts.
func assertLacks(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, part := range parts {
		if strings.Contains(msg, part) {
			t.Errorf("error %q says %q, which is not the argument to change", msg, part)
		}
	}
}

// A TLS handshake that fails with the chart's own server (its certificate is
// from a CA the client does not trust, or it refuses the client's
// certificate) sends the user to the chart's repository_* files, and
// nowhere else.
func TestTLSErrorsOfTheChartNameRepositoryFiles(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{TLS: true}, "app", "1.0.0")
	certRepo := repositoryWith(t, chartrepo.Options{ClientCertificates: true}, "app", "1.0.0")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	archive := chartrepo.NewRepository(t, chartrepo.Options{TLS: true})
	archive.Serve("app-1.0.0.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))

	for _, tc := range []struct {
		name string
		src  helmchart.Source
		want []string
	}{
		{"repository, unknown CA", helmchart.Source{Repository: repo.URL, Chart: "app"},
			[]string{repo.URL, "not trusted", "set repository_ca_file"}},
		{"chart URL, unknown CA", helmchart.Source{Chart: archive.URL + "/app-1.0.0.tgz"},
			[]string{archive.URL, "not trusted", "set repository_ca_file"}},
		{"registry, unknown CA", helmchart.Source{Chart: registry.Ref("charts", "app"), Version: "1.0.0"},
			[]string{"oci://" + registry.Host + "/charts/app", "not trusted", "set repository_ca_file"}},
		{"repository, no client certificate", helmchart.Source{Repository: certRepo.URL, Chart: "app", CAFile: certRepo.CAFile},
			[]string{certRepo.URL, "did not accept the client certificate", "set repository_cert_file and repository_key_file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := loadError(t, tc.src)
			assertContains(t, msg, tc.want...)
			assertLacks(t, msg, "dependency_repositories")
		})
	}
}

// The same failures with a dependency's repository or registry send the
// user to dependency_repositories: to the entry that covers it, or to one to
// add, and name the dependency and its URL. The chart's repository_* files
// are never named, even when they are the ones that were used (a local
// chart's are its dependencies' too, until an entry gives its own).
func TestTLSErrorsOfADependencyNameDependencyRepositories(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{TLS: true}, "child", "1.0.0")
	certRepo := repositoryWith(t, chartrepo.Options{ClientCertificates: true}, "child", "1.0.0")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", "0.1.0")))
	ociRepository := "oci://" + registry.Host + "/charts"

	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})
	certDir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: certRepo.URL})
	ociDir := parentChart(t, nil, &chart.Dependency{Name: "ocichild", Version: "0.1.0", Repository: ociRepository})

	// A downloaded chart, from a server whose CA is given, whose dependency
	// is on another server with another CA.
	origin := chartrepo.NewRepository(t, chartrepo.Options{TLS: true})
	origin.Serve("parent-0.1.0.tgz", chartrepo.MustPackage(t,
		chartrepo.Chart("parent", "0.1.0", &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})))

	for _, tc := range []struct {
		name string
		src  helmchart.Source
		want []string
	}{
		{"repository, unknown CA, no entry", helmchart.Source{Chart: dir},
			[]string{`dependency "child"`, repo.URL + "/index.yaml", "not trusted",
				"add to dependency_repositories an entry whose url is " + repo.URL + " or a prefix of it, with ca_file"}},
		{"repository, the chart's CA is another", helmchart.Source{Chart: dir, CAFile: certRepo.CAFile},
			[]string{`dependency "child"`, repo.URL, "not trusted", "add to dependency_repositories an entry whose url is " + repo.URL}},
		{"repository, entry without ca_file", helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{
			{URL: repo.URL + "/", Username: testUser, Password: testPassword}}},
			[]string{`dependency "child"`, repo.URL, "not trusted", `set ca_file in the dependency_repositories entry "` + repo.URL + `/"`}},
		{"repository, entry with another CA", helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{
			{URL: repo.URL, CAFile: certRepo.CAFile}}},
			[]string{`dependency "child"`, repo.URL, "not trusted", `check ca_file of the dependency_repositories entry "` + repo.URL + `"`}},
		{"downloaded chart's dependency, unknown CA", helmchart.Source{Chart: origin.URL + "/parent-0.1.0.tgz", CAFile: origin.CAFile},
			[]string{`dependency "child"`, repo.URL, "not trusted", "add to dependency_repositories an entry whose url is " + repo.URL}},
		{"repository, no client certificate, no entry", helmchart.Source{Chart: certDir, CAFile: certRepo.CAFile},
			[]string{`dependency "child"`, certRepo.URL, "did not accept the client certificate",
				"add to dependency_repositories an entry whose url is " + certRepo.URL + " or a prefix of it, with cert_file and key_file"}},
		{"repository, no client certificate in the entry", helmchart.Source{Chart: certDir, DependencyRepositories: []helmchart.DependencyRepository{
			{URL: certRepo.URL, CAFile: certRepo.CAFile}}},
			[]string{`dependency "child"`, certRepo.URL, "did not accept the client certificate",
				`set cert_file and key_file in the dependency_repositories entry "` + certRepo.URL + `"`}},
		{"registry, unknown CA, no entry", helmchart.Source{Chart: ociDir},
			[]string{`dependency "ocichild"`, ociRepository + "/ocichild", "not trusted",
				"add to dependency_repositories an entry whose url is " + ociRepository + " or a prefix of it, with ca_file"}},
		{"registry, entry without ca_file", helmchart.Source{Chart: ociDir, DependencyRepositories: []helmchart.DependencyRepository{
			{URL: "oci://" + registry.Host}}},
			[]string{`dependency "ocichild"`, ociRepository + "/ocichild", "not trusted",
				`set ca_file in the dependency_repositories entry "oci://` + registry.Host + `"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := loadError(t, tc.src)
			assertContains(t, msg, tc.want...)
			assertLacks(t, msg, "repository_ca_file", "repository_cert_file", "repository_key_file")
		})
	}

	// And each is fixed where the error said.
	for name, src := range map[string]helmchart.Source{
		"repository": {Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{{URL: repo.URL, CAFile: repo.CAFile}}},
		"client certificate": {Chart: certDir, DependencyRepositories: []helmchart.DependencyRepository{
			{URL: certRepo.URL, CAFile: certRepo.CAFile, CertFile: certRepo.ClientCertFile, KeyFile: certRepo.ClientKeyFile}}},
		"registry": {Chart: ociDir, DependencyRepositories: []helmchart.DependencyRepository{{URL: "oci://" + registry.Host, CAFile: registry.CAFile}}},
	} {
		t.Run("fixed, "+name, func(t *testing.T) {
			if c := mustLoad(t, src); len(c.Dependencies()) != 1 {
				t.Fatalf("subcharts %v, want one", subchartVersions(c))
			}
		})
	}
}
