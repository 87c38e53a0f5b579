package helmchart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// servedArchive serves app at version under downloads/ on a server of its
// own with opts, outside any index, and returns the server and the URL.
func servedArchive(t *testing.T, opts chartrepo.Options, version string) (*chartrepo.Repository, string) {
	t.Helper()
	server := chartrepo.NewRepository(t, opts)
	server.Serve("downloads/app-"+version+".tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", version)))
	return server, server.URL + "/downloads/app-" + version + ".tgz"
}

// withUserinfo writes the test credentials (or others) into a URL.
func withUserinfo(rawURL, user, password string) string {
	return strings.Replace(rawURL, "://", "://"+user+":"+password+"@", 1)
}

func TestChartURL(t *testing.T) {
	cacheDir := isolatedCache(t)
	server, chartURL := servedArchive(t, chartrepo.Options{}, "1.2.3")
	src := helmchart.Source{Chart: chartURL}
	if !src.Remote() {
		t.Fatal("a chart URL is not counted as remote")
	}
	c := mustLoad(t, src)
	if c.Name() != "app" || c.Version != "1.2.3" || c.Metadata.Version != "1.2.3" {
		t.Fatalf("loaded %s %s (Chart.yaml %s), want app 1.2.3", c.Name(), c.Version, c.Metadata.Version)
	}
	if c.Values["greeting"] != "hello from app 1.2.3" {
		t.Fatalf("values %v", c.Values)
	}
	assertCacheHolds(t, cacheDir, 1)

	// Each plan asks whether the archive changed (the server's ETag answers
	// 304, no download); the apply, which pins the version the plan loaded,
	// reads the kept copy without asking. "1.2" is a range of patches, so it
	// asks.
	for _, version := range []string{"", "1.2.3", "^1.2", "1.2"} {
		if c := mustLoad(t, withVersion(src, version)); c.Version != "1.2.3" {
			t.Fatalf("version %q loaded %s", version, c.Version)
		}
	}
	if got, want := statuses(server, "/downloads/app-1.2.3.tgz"), []int{200, 304, 304, 304}; !slices.Equal(got, want) {
		t.Fatalf("five loads (empty, empty, exact, constraint, 1.2) were answered %v, want %v", got, want)
	}
}

// statuses are the answers server gave to the requests for urlPath, in order.
func statuses(server *chartrepo.Repository, urlPath string) []int {
	var out []int
	for _, r := range server.Requests() {
		if r.Path == urlPath {
			out = append(out, r.Status)
		}
	}
	return out
}

// A URL is scheme-insensitive, like any URL: HTTP:// is not a file name.
func TestChartURLUpperCaseScheme(t *testing.T) {
	isolatedCache(t)
	_, chartURL := servedArchive(t, chartrepo.Options{}, "1.0.0")
	if c := mustLoad(t, helmchart.Source{Chart: "HTTP" + strings.TrimPrefix(chartURL, "http")}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

// A URL republished with another version: the next plan (no version, or a
// constraint) takes it, as helm install would, whatever this machine kept;
// an apply pinned to the version its plan loaded still gets those bytes,
// without asking; a version the URL no longer serves is an error that says
// what it holds.
func TestChartURLRepublished(t *testing.T) {
	isolatedCache(t)
	server := chartrepo.NewRepository(t, chartrepo.Options{})
	server.Serve("app.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	src := helmchart.Source{Chart: server.URL + "/app.tgz"}
	mustLoad(t, src) // the plan

	server.Serve("app.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.1.0")))
	if c := mustLoad(t, withVersion(src, "1.0.0")); c.Version != "1.0.0" { // its apply
		t.Fatalf("the apply pinned to 1.0.0 loaded %s", c.Version)
	}
	if c := mustLoad(t, src); c.Version != "1.1.0" { // the next plan
		t.Fatalf("after the URL was republished as 1.1.0, an empty version loaded %s", c.Version)
	}
	if c := mustLoad(t, withVersion(src, "^1.0")); c.Version != "1.1.0" {
		t.Fatalf("a constraint loaded %s", c.Version)
	}
	assertContains(t, loadError(t, withVersion(src, "1.0.0")), "holds chart app 1.1.0", `"1.0.0"`)
	if got, want := statuses(server, "/app.tgz"), []int{200, 200, 304, 304}; !slices.Equal(got, want) {
		t.Fatalf("the loads were answered %v, want %v", got, want)
	}
}

func TestChartURLVersion(t *testing.T) {
	cacheDir := isolatedCache(t)
	server := chartrepo.NewRepository(t, chartrepo.Options{})
	server.Serve("app.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.2.3")))
	server.Serve("rc.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.3.0-rc.1")))
	src := helmchart.Source{Chart: server.URL + "/app.tgz"}

	msg := loadError(t, withVersion(src, "2.0.0"))
	assertContains(t, msg, server.URL+"/app.tgz", "holds chart app 1.2.3", `"2.0.0"`, "set version to match")
	msg = loadError(t, withVersion(src, "~1.3"))
	assertContains(t, msg, "holds chart app 1.2.3", `"~1.3"`)
	msg = loadError(t, withVersion(src, "not a version"))
	assertContains(t, msg, "neither a version nor a semver constraint")
	// An archive of another version is not kept: it is not what was asked for.
	assertCacheHolds(t, cacheDir, 0)

	rc := helmchart.Source{Chart: server.URL + "/rc.tgz", Version: "^1.2"}
	assertContains(t, loadError(t, rc), "1.3.0-rc.1", "devel = true")
	rc.Devel = true
	if c := mustLoad(t, rc); c.Version != "1.3.0-rc.1" {
		t.Fatalf("loaded %s", c.Version)
	}
	rc.Devel = false
	if c := mustLoad(t, withVersion(rc, "1.3.0-rc.1")); c.Version != "1.3.0-rc.1" {
		t.Fatalf("the exact pre-release loaded %s", c.Version)
	}
}

func TestChartURLNotFound(t *testing.T) {
	isolatedCache(t)
	server, chartURL := servedArchive(t, chartrepo.Options{Username: testUser, Password: testPassword}, "1.0.0")
	missing := server.URL + "/downloads/app-9.9.9.tgz"
	msg := loadError(t, helmchart.Source{Chart: withUserinfo(missing, testUser, testPassword)})
	assertContains(t, msg, missing, "404", "check the chart URL")
	msg = loadError(t, helmchart.Source{Chart: missing, Username: testUser, Password: testPassword})
	assertContains(t, msg, missing, "404")
	if c := mustLoad(t, helmchart.Source{Chart: chartURL, Username: testUser, Password: testPassword}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

func TestChartURLBasicAuth(t *testing.T) {
	isolatedCache(t)
	_, chartURL := servedArchive(t, chartrepo.Options{Username: testUser, Password: testPassword}, "1.0.0")

	msg := loadError(t, helmchart.Source{Chart: chartURL})
	assertContains(t, msg, chartURL, "requires credentials", "401", "repository_username")

	msg = loadError(t, helmchart.Source{Chart: chartURL, Username: testUser, Password: testPassword + "-wrong"})
	assertContains(t, msg, chartURL, "refused the credentials", "401")
	if strings.Contains(msg, testPassword+"-wrong") {
		t.Fatalf("the error gives away the wrong password: %s", msg)
	}

	if c := mustLoad(t, helmchart.Source{Chart: chartURL, Username: testUser, Password: testPassword}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

// Credentials written into the chart URL are used, sent only as basic auth,
// and never shown: not in an error about the download, nor in one about
// what was downloaded, nor in one about the URL itself.
func TestChartURLCredentialsInURL(t *testing.T) {
	isolatedCache(t)
	server, chartURL := servedArchive(t, chartrepo.Options{Username: testUser, Password: testPassword}, "1.0.0")
	server.Serve("page.tgz", []byte("<html><body>log in to download "+testPassword+"</body></html>\n"))

	for _, tc := range []struct {
		chart string
		says  []string
	}{
		{withUserinfo(chartURL, testUser, testPassword+"-wrong"), []string{chartURL, "refused the credentials"}},
		{withUserinfo(server.URL+"/page.tgz", testUser, testPassword), []string{server.URL + "/page.tgz", "not a packaged Helm chart"}},
		{withUserinfo(chartURL, testUser, testPassword), nil}, // with a version it does not hold
		{"http://" + testUser + ":" + testPassword + "%zz@127.0.0.1/app.tgz", []string{"does not parse"}},
	} {
		src := helmchart.Source{Chart: tc.chart}
		if tc.says == nil {
			src.Version = "2.0.0"
			tc.says = []string{chartURL, "holds chart app 1.0.0"}
		}
		msg := loadError(t, src)
		assertContains(t, msg, tc.says...)
		if strings.Contains(msg, testPassword) || strings.Contains(msg, testUser+":") {
			t.Errorf("the error quotes the URL's credentials: %s", msg)
		}
	}

	msg := loadError(t, helmchart.Source{Chart: withUserinfo(chartURL, testUser, testPassword), Username: testUser, Password: testPassword})
	assertContains(t, msg, "both in the repository or chart URL and in repository_username")

	if c := mustLoad(t, helmchart.Source{Chart: withUserinfo(chartURL, testUser, testPassword)}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	// The copy the credentials downloaded is not served without them.
	assertContains(t, loadError(t, helmchart.Source{Chart: chartURL}), "requires credentials")
}

// A redirect to another host (another port is another origin) gets no
// credentials unless pass_credentials says so; the URL's own host always
// does.
func TestChartURLCredentialsStayOnItsHost(t *testing.T) {
	for _, pass := range []bool{false, true} {
		name := "pass_credentials=false"
		if pass {
			name = "pass_credentials=true"
		}
		t.Run(name, func(t *testing.T) {
			isolatedCache(t)
			server := chartrepo.NewRepository(t, chartrepo.Options{Username: testUser, Password: testPassword})
			elsewhere := chartrepo.NewRepository(t, chartrepo.Options{})
			elsewhere.Serve("mirror/app-1.0.0.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
			server.Redirect("downloads/app-1.0.0.tgz", elsewhere.URL+"/mirror/app-1.0.0.tgz")

			src := helmchart.Source{Chart: withUserinfo(server.URL+"/downloads/app-1.0.0.tgz", testUser, testPassword), PassCredentials: pass}
			if c := mustLoad(t, src); c.Version != "1.0.0" {
				t.Fatalf("loaded %s", c.Version)
			}
			for _, r := range server.Requests() {
				if !r.Authorization {
					t.Errorf("the chart URL's host got %s without credentials", r.Path)
				}
			}
			requests := elsewhere.Requests()
			if len(requests) != 1 {
				t.Fatalf("the other host got %d requests, want 1: %+v", len(requests), requests)
			}
			if requests[0].Authorization != pass {
				t.Errorf("the other host got credentials %v; pass_credentials is %v", requests[0].Authorization, pass)
			}
		})
	}
}

// What is not a chart archive is said to be so, and never cached: the next
// load asks again.
func TestChartURLNotAnArchive(t *testing.T) {
	cacheDir := isolatedCache(t)
	server := chartrepo.NewRepository(t, chartrepo.Options{})
	server.Serve("page.tgz", []byte("<!doctype html><title>Release 1.0.0</title><a href=app-1.0.0.tgz>download</a>\n"))
	server.Serve("nochart.tgz", tarGz(t, map[string]string{"app/README.md": "no Chart.yaml here\n"}))

	for _, p := range []string{"/page.tgz", "/nochart.tgz"} {
		msg := loadError(t, helmchart.Source{Chart: server.URL + p})
		assertContains(t, msg, server.URL+p, "not a packaged Helm chart", "check that the URL leads to the archive itself")
	}
	loadError(t, helmchart.Source{Chart: server.URL + "/page.tgz"})
	if got := server.Count("/page.tgz"); got != 2 {
		t.Fatalf("the page was downloaded %d times, want 2 (never cached)", got)
	}
	assertCacheHolds(t, cacheDir, 0)
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A corrupted cache entry is noticed and downloaded again.
func TestChartURLCorruptCacheEntry(t *testing.T) {
	cacheDir := isolatedCache(t)
	server, chartURL := servedArchive(t, chartrepo.Options{}, "1.0.0")
	mustLoad(t, helmchart.Source{Chart: chartURL})
	corruptCache(t, cacheDir)
	if c := mustLoad(t, helmchart.Source{Chart: chartURL}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	if got := server.Count("/downloads/"); got != 2 {
		t.Fatalf("downloaded %d times, want 2", got)
	}
}

func TestChartURLTLS(t *testing.T) {
	isolatedCache(t)
	_, chartURL := servedArchive(t, chartrepo.Options{TLS: true}, "1.0.0")
	src := helmchart.Source{Chart: chartURL}
	assertContains(t, loadError(t, src), "not trusted", "repository_ca_file", chartURL)
}

func TestChartURLClientCertificate(t *testing.T) {
	isolatedCache(t)
	server, chartURL := servedArchive(t, chartrepo.Options{ClientCertificates: true}, "1.0.0")
	src := helmchart.Source{Chart: chartURL, CAFile: server.CAFile}
	assertContains(t, loadError(t, src), "did not accept the client certificate")
	src.CertFile, src.KeyFile = server.ClientCertFile, server.ClientKeyFile
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

// A downloaded chart's dependencies missing from its charts/ are built as a
// local chart's are, and the chart URL's credentials do not go with them.
func TestChartURLDependencies(t *testing.T) {
	isolatedCache(t)
	deps := repositoryWith(t, chartrepo.Options{}, "sub", "1.0.0", "1.1.0")
	server := chartrepo.NewRepository(t, chartrepo.Options{Username: testUser, Password: testPassword})
	parent := chartrepo.Chart("app", "1.0.0", &chart.Dependency{Name: "sub", Version: "^1.0.0", Repository: deps.URL})
	server.Serve("app.tgz", chartrepo.MustPackage(t, parent))

	c := mustLoad(t, helmchart.Source{Chart: server.URL + "/app.tgz", Username: testUser, Password: testPassword})
	if got := subchartVersions(c); got["sub"] != "1.1.0" || len(got) != 1 {
		t.Fatalf("subcharts %v, want sub 1.1.0", got)
	}
	for _, r := range deps.Requests() {
		if r.Authorization {
			t.Errorf("the dependency's repository got the chart URL's credentials with %s", r.Path)
		}
	}

	orphan := chartrepo.Chart("orphan", "1.0.0", &chart.Dependency{Name: "sub", Version: "1.0.0"})
	server.Serve("orphan.tgz", chartrepo.MustPackage(t, orphan))
	msg := loadError(t, helmchart.Source{Chart: server.URL + "/orphan.tgz", Username: testUser, Password: testPassword})
	assertContains(t, msg, "no repository", "the charts/ directory of "+server.URL+"/orphan.tgz")
}

func TestChartURLWithRepository(t *testing.T) {
	isolatedCache(t)
	_, chartURL := servedArchive(t, chartrepo.Options{}, "1.0.0")
	msg := loadError(t, helmchart.Source{Chart: chartURL, Repository: "https://charts.example.test"})
	assertContains(t, msg, "a repository is set too")
}

func TestChartURLMalformed(t *testing.T) {
	isolatedCache(t)
	assertContains(t, loadError(t, helmchart.Source{Chart: "https:///app.tgz"}), "not a valid http(s) URL")
}

func TestChartURLCancelled(t *testing.T) {
	isolatedCache(t)
	_, chartURL := servedArchive(t, chartrepo.Options{}, "1.0.0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := helmchart.Load(ctx, helmchart.Source{Chart: chartURL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context: %v, want context.Canceled", err)
	}
}

// A download that stalls halfway stops when the context is cancelled, and
// what arrived is not cached.
func TestChartURLCancelledMidDownload(t *testing.T) {
	cacheDir := isolatedCache(t)
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	started := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		_, _ = w.Write(archive[:len(archive)/2])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	t.Cleanup(server.Close)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := helmchart.Load(ctx, helmchart.Source{Chart: server.URL + "/app.tgz"})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Load cancelled mid-download: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Load did not return after its context was cancelled")
	}
	assertCacheHolds(t, cacheDir, 0)
}
