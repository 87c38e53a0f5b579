package helmchart_test

import (
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// The credentials of the second protected server, so that a test can tell
// which server's credentials went where.
const (
	otherUser     = "other-reader"
	otherPassword = "0ther-Pa55word-k2"
)

// A local chart's dependency in a repository behind a password, and another
// in a registry behind another: each gets the credentials of the
// dependency_repositories entry that covers it, and nothing else does.
func TestDependencyRepositoriesCredentials(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "child", "1.0.0")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: otherUser, Password: otherPassword})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", "0.1.0")))
	bystander := repositoryWith(t, chartrepo.Options{}, "public", "1.0.0")
	dir := parentChart(t, nil,
		&chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL},
		&chart.Dependency{Name: "ocichild", Version: "0.1.0", Repository: "oci://" + registry.Host + "/charts"},
		&chart.Dependency{Name: "public", Version: "1.0.0", Repository: bystander.URL})

	c := mustLoad(t, helmchart.Source{Chart: dir, CAFile: registry.CAFile, DependencyRepositories: []helmchart.DependencyRepository{
		{URL: repo.URL + "/", Username: testUser, Password: testPassword},
		{URL: "oci://" + registry.Host, Username: otherUser, Password: otherPassword},
	}})
	if got := subchartVersions(c); got["child"] != "1.0.0" || got["ocichild"] != "0.1.0" || got["public"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0, ocichild 0.1.0 and public 1.0.0", got)
	}
	if n := chartrepo.Authorized(bystander.Requests()); n != 0 {
		t.Errorf("the repository no entry covers got credentials with %d requests", n)
	}
}

// Chart.yaml may name any host. Neither a downloaded chart's own credentials
// nor an entry's go to a repository on another origin: not to another port
// of the same host (every test server is on 127.0.0.1), whose digits an
// entry's may begin, and not to one above an entry's path. (A local chart's
// credentials go nowhere: TestDependenciesGetNoCredentials.)
func TestDependencyCredentialsNotSentElsewhere(t *testing.T) {
	isolatedCache(t)
	origin := chartrepo.NewRepository(t, chartrepo.Options{Username: testUser, Password: testPassword})
	attacker := repositoryWith(t, chartrepo.Options{}, "child", "1.0.0")
	parent := chartrepo.Chart("parent", "0.1.0", &chart.Dependency{Name: "child", Version: "1.0.0", Repository: attacker.URL})
	origin.Serve("downloads/parent-0.1.0.tgz", chartrepo.MustPackage(t, parent))

	// A downloaded chart with credentials, pass_credentials included, and
	// entries for the chart's host, for a port whose digits begin the
	// attacker's (a prefix of its URL's text), and for a path under the
	// attacker's repository.
	c := mustLoad(t, helmchart.Source{
		Chart: origin.URL + "/downloads/parent-0.1.0.tgz", Username: testUser, Password: testPassword, PassCredentials: true,
		DependencyRepositories: []helmchart.DependencyRepository{
			{URL: origin.URL, Username: otherUser, Password: otherPassword},
			{URL: strings.TrimSuffix(attacker.URL, attacker.URL[len(attacker.URL)-1:]), Username: otherUser, Password: otherPassword},
			{URL: attacker.URL + "/charts", Username: otherUser, Password: otherPassword},
		},
	})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0", got)
	}
	if len(attacker.Requests()) == 0 {
		t.Fatal("the attacker's repository got no request: the test proves nothing")
	}
	if n := chartrepo.Authorized(attacker.Requests()); n != 0 {
		t.Errorf("the repository Chart.yaml names on another origin got an Authorization header with %d requests", n)
	}

}

// A downloaded chart's dependency in its own repository (same scheme, host
// and port) is fetched as the chart is, with the chart's credentials.
func TestDependencyCredentialsSameOrigin(t *testing.T) {
	isolatedCache(t)
	origin := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "child", "1.0.0")
	parent := chartrepo.Chart("parent", "0.1.0", &chart.Dependency{Name: "child", Version: "1.0.0", Repository: origin.URL})
	origin.Serve("downloads/parent-0.1.0.tgz", chartrepo.MustPackage(t, parent))
	chartURL := origin.URL + "/downloads/parent-0.1.0.tgz"

	c := mustLoad(t, helmchart.Source{Chart: chartURL, Username: testUser, Password: testPassword})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0", got)
	}

	// Refused with the chart's credentials, the error says they are the
	// chart's, sent because the dependency is on its host. (An exact
	// version is the apply's load, which takes the archive the last load
	// kept without asking the server; so only the dependency asks.)
	msg := loadError(t, helmchart.Source{Chart: chartURL, Version: "0.1.0", Username: testUser, Password: testPassword + "-wrong"})
	assertContains(t, msg, `dependency "child"`, "refused the credentials", "401",
		"repository_username and repository_password, sent to it as it is on the chart's own host")
}

// Entries are matched by path segment, the longest match wins whatever the
// order, and host names are compared without case: an entry for the whole
// registry with a wrong password loses to one for its charts/ path, and an
// entry for a path that only begins like charts/ does not apply.
func TestDependencyRepositoriesLongestMatch(t *testing.T) {
	isolatedCache(t)
	registry := registryWith(t, "child", "1.0.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: "oci://" + registry.Host + "/charts"})
	right := func(url string) helmchart.DependencyRepository {
		return helmchart.DependencyRepository{URL: url, Username: testUser, Password: testPassword}
	}
	wrong := func(url string) helmchart.DependencyRepository {
		return helmchart.DependencyRepository{URL: url, Username: testUser, Password: testPassword + "-wrong"}
	}
	for name, entries := range map[string][]helmchart.DependencyRepository{
		"longer last":           {wrong("oci://" + registry.Host), right("oci://" + registry.Host + "/charts")},
		"longer first":          {right("oci://" + registry.Host + "/charts/"), wrong("oci://" + registry.Host)},
		"prefix of a segment":   {right("oci://" + registry.Host), wrong("oci://" + registry.Host + "/chart")},
		"deeper path not taken": {right("oci://" + registry.Host + "/charts"), wrong("oci://" + registry.Host + "/charts/child")},
	} {
		t.Run(name, func(t *testing.T) {
			isolatedCache(t)
			c := mustLoad(t, helmchart.Source{Chart: dir, CAFile: registry.CAFile, DependencyRepositories: entries})
			if got := subchartVersions(c); got["child"] != "1.0.0" {
				t.Fatalf("subcharts %v, want child 1.0.0", got)
			}
		})
	}
}

// A 401 from a dependency's repository names the dependency, the URL and the
// argument that gives it credentials; the password never shows.
func TestDependencyCredentialErrors(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "child", "1.0.0")
	registry := registryWith(t, "ocichild", "0.1.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})
	ociDir := parentChart(t, nil, &chart.Dependency{Name: "ocichild", Version: "0.1.0", Repository: "oci://" + registry.Host + "/charts"})

	// None given: the chart's own credentials do not count for a local
	// chart's dependency, and the error says where they go instead.
	msg := loadError(t, helmchart.Source{Chart: dir, Username: testUser, Password: testPassword})
	assertContains(t, msg, `dependency "child"`, repo.URL+"/index.yaml", "requires credentials", "401",
		"dependency_repositories", "whose url is "+repo.URL)

	msg = loadError(t, helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{
		{URL: repo.URL, Username: testUser, Password: testPassword + "-wrong"},
	}})
	assertContains(t, msg, `dependency "child"`, repo.URL, "refused the credentials", "401",
		`the username and password of the dependency_repositories entry "`+repo.URL+`"`)

	// An entry with TLS files only gives no credentials; the error names it.
	msg = loadError(t, helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{{URL: repo.URL}}})
	assertContains(t, msg, "requires credentials", `the dependency_repositories entry "`+repo.URL+`"`)

	msg = loadError(t, helmchart.Source{Chart: ociDir, CAFile: registry.CAFile})
	assertContains(t, msg, `dependency "ocichild"`, "oci://"+registry.Host+"/charts/ocichild", "requires credentials", "dependency_repositories")
	msg = loadError(t, helmchart.Source{Chart: ociDir, CAFile: registry.CAFile, DependencyRepositories: []helmchart.DependencyRepository{
		{URL: "oci://" + registry.Host, Username: testUser, Password: testPassword + "-wrong"},
	}})
	assertContains(t, msg, `dependency "ocichild"`, "refused the credentials", `dependency_repositories entry "oci://`+registry.Host+`"`)

	// An entry that could not match is refused, even if it is not used.
	msg = loadError(t, helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{
		{URL: strings.Replace(repo.URL, "://", "://"+testUser+":"+testPassword+"@", 1)},
	}})
	assertContains(t, msg, "dependency_repositories", "credentials in it")
}

// An entry's CA file takes the place of the chart's for the dependencies it
// covers, so a dependency behind another CA than the chart's can be reached.
func TestDependencyRepositoriesCAFile(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{TLS: true}, "child", "1.0.0")
	dir := parentChart(t, nil, &chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL})
	assertContains(t, loadError(t, helmchart.Source{Chart: dir}), `dependency "child"`, "not trusted")
	c := mustLoad(t, helmchart.Source{Chart: dir, DependencyRepositories: []helmchart.DependencyRepository{{URL: repo.URL, CAFile: repo.CAFile}}})
	if got := subchartVersions(c); got["child"] != "1.0.0" {
		t.Fatalf("subcharts %v, want child 1.0.0", got)
	}
}
