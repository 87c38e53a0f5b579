package helmchart_test

import (
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// registryWith starts a registry behind basic auth holding app at each
// version, under charts/.
func registryWith(t *testing.T, name string, versions ...string) *chartrepo.Registry {
	t.Helper()
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: testUser, Password: testPassword})
	for _, v := range versions {
		registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart(name, v)))
	}
	return registry
}

func TestOCIVersionResolution(t *testing.T) {
	isolatedCache(t)
	registry := registryWith(t, "app", "1.0.0", "1.1.0", "1.2.0-beta.1", "2.0.0", "2.1.0+build.7")
	ref := registry.Ref("charts", "app")
	for _, tc := range []struct {
		name string
		src  helmchart.Source
		want string
	}{
		{"exact", helmchart.Source{Chart: ref, Version: "1.0.0"}, "1.0.0"},
		{"constraint", helmchart.Source{Chart: ref, Version: "~1.0"}, "1.0.0"},
		{"caret", helmchart.Source{Chart: ref, Version: "^1"}, "1.1.0"},
		{"major only is a constraint", helmchart.Source{Chart: ref, Version: "1"}, "1.1.0"},
		{"latest", helmchart.Source{Chart: ref}, "2.1.0+build.7"},
		{"devel", helmchart.Source{Chart: ref, Version: "^1", Devel: true}, "1.2.0-beta.1"},
		{"build metadata as a tag", helmchart.Source{Chart: ref, Version: "2.1.0+build.7"}, "2.1.0+build.7"},
		{"tag in the reference", helmchart.Source{Chart: ref + ":1.1.0"}, "1.1.0"},
		{"repository and name", helmchart.Source{Repository: "oci://" + registry.Host + "/charts", Chart: "app", Version: "2.0.0"}, "2.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.src.Username, tc.src.Password, tc.src.CAFile = testUser, testPassword, registry.CAFile
			c := mustLoad(t, tc.src)
			if c.Version != tc.want || c.Metadata.Version != tc.want {
				t.Fatalf("loaded %s (Chart.yaml %s), want %s", c.Version, c.Metadata.Version, tc.want)
			}
		})
	}
}

func TestOCIErrors(t *testing.T) {
	isolatedCache(t)
	registry := registryWith(t, "app", "1.0.0", "1.1.0")
	ref := registry.Ref("charts", "app")
	good := helmchart.Source{Chart: ref, Username: testUser, Password: testPassword, CAFile: registry.CAFile}

	wrong := good
	wrong.Password = testPassword + "-wrong"
	assertContains(t, loadError(t, wrong), "refused the credentials", "401", registry.Host)

	anonymous := good
	anonymous.Username, anonymous.Password = "", ""
	assertContains(t, loadError(t, anonymous), "requires credentials")

	untrusted := good
	untrusted.CAFile = ""
	assertContains(t, loadError(t, untrusted), "not trusted", "repository_ca_file")

	noMatch := good
	noMatch.Version = ">=2"
	assertContains(t, loadError(t, noMatch), `no version matching ">=2"`, "1.1.0, 1.0.0")

	missingVersion := good
	missingVersion.Version = "9.9.9"
	assertContains(t, loadError(t, missingVersion), `no version matching "9.9.9"`, ref, "1.1.0, 1.0.0")

	missingTag := good
	missingTag.Chart = ref + ":9.9.9"
	assertContains(t, loadError(t, missingTag), ref+":9.9.9", "not found")

	missingChart := good
	missingChart.Chart = registry.Ref("charts", "nothing")
	assertContains(t, loadError(t, missingChart), "nothing")

	both := good
	both.Repository = "oci://" + registry.Host + "/charts"
	assertContains(t, loadError(t, both), "give one or the other")

	disagree := good
	disagree.Chart, disagree.Version = ref+":1.0.0", "1.1.0"
	assertContains(t, loadError(t, disagree), "disagree")
}

func TestOCIDigestReference(t *testing.T) {
	isolatedCache(t)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{})
	digest := registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "2.0.0")))
	src := helmchart.Source{Chart: registry.Ref("charts", "app") + "@" + digest, CAFile: registry.CAFile}
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s by digest, want 1.0.0", c.Version)
	}
	src.Version = "2.0.0"
	assertContains(t, loadError(t, src), "holds chart version 1.0.0, not 2.0.0")
}

// The second load fetches the manifest again (it is what names the layer's
// digest) but not the chart.
func TestOCICache(t *testing.T) {
	cacheDir := isolatedCache(t)
	registry := registryWith(t, "app", "1.0.0", "1.1.0")
	src := helmchart.Source{Chart: registry.Ref("charts", "app"), Version: "^1", Username: testUser, Password: testPassword, CAFile: registry.CAFile}
	blobsBefore := registry.Count("/blobs/")

	mustLoad(t, src)
	if got := registry.Count("/blobs/") - blobsBefore; got != 1 {
		t.Fatalf("the first load fetched %d blobs, want 1 (the chart layer)", got)
	}
	if c := mustLoad(t, src); c.Version != "1.1.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	if got := registry.Count("/blobs/") - blobsBefore; got != 1 {
		t.Fatalf("two loads fetched %d blobs, want 1", got)
	}
	assertCacheHolds(t, cacheDir, 1)

	// Pushed again with other content: another layer digest, fetched anew.
	changed := chartrepo.Chart("app", "1.1.0")
	changed.Metadata.Description = "republished"
	registry.Push(t, "charts", chartrepo.MustPackage(t, changed))
	blobsBefore = registry.Count("/blobs/")
	if c := mustLoad(t, src); c.Metadata.Description != "republished" {
		t.Fatal("a stale cache entry was used for a new digest")
	}
	if got := registry.Count("/blobs/") - blobsBefore; got != 1 {
		t.Fatalf("the republished chart took %d blob fetches, want 1", got)
	}
	for _, r := range registry.Requests() {
		if strings.Contains(r.Path, "/blobs/") && r.Method == "GET" && !r.Authorization {
			t.Errorf("a blob was fetched without credentials: %s", r.Path)
		}
	}
}

// Registries redirect blob downloads to storage elsewhere; the registry's
// credentials do not follow (another port on the same host is elsewhere).
// oras-go's client and ours both drop them; this holds whichever does.
func TestOCICredentialsStayOnTheRegistry(t *testing.T) {
	isolatedCache(t)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: testUser, Password: testPassword, BlobsElsewhere: true})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	src := helmchart.Source{Chart: registry.Ref("charts", "app"), Version: "1.0.0", Username: testUser, Password: testPassword, CAFile: registry.CAFile}
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	storage := registry.StorageRequests()
	if len(storage) != 1 {
		t.Fatalf("the storage got %d requests, want 1 (the chart layer): %+v", len(storage), storage)
	}
	if storage[0].Authorization {
		t.Fatalf("the storage got the registry's credentials with %s", storage[0].Path)
	}
}

// A registry without TLS, as one on the local machine is: plain_http reaches
// it (the chart, and a local chart's oci:// dependency there); without it the
// error says the registry answers in plain HTTP and what to set; plain_http
// on anything but a registry is refused, not ignored.
func TestOCIPlainHTTP(t *testing.T) {
	isolatedCache(t)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: testUser, Password: testPassword, PlainHTTP: true})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	src := helmchart.Source{Chart: registry.Ref("charts", "app"), Username: testUser, Password: testPassword, PlainHTTP: true}
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s, want 1.0.0", c.Version)
	}

	overTLS := src
	overTLS.PlainHTTP = false
	msg := loadError(t, overTLS)
	assertContains(t, msg, registry.Host, "answers in plain HTTP", "plain_http = true")
	assertNoSecret(t, msg)

	dir := parentChart(t, nil, &chart.Dependency{Name: "app", Version: "1.0.0", Repository: "oci://" + registry.Host + "/charts"})
	// The registry wants credentials, which a dependency is not sent: the
	// 401 proves the request went over plain HTTP, as a TLS attempt fails
	// before any status.
	assertContains(t, loadError(t, helmchart.Source{Chart: dir, PlainHTTP: true}), "401")
	open := chartrepo.NewRegistry(t, chartrepo.Options{PlainHTTP: true})
	open.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", "0.1.0")))
	dir = parentChart(t, nil, &chart.Dependency{Name: "ocichild", Version: "~0.1", Repository: "oci://" + open.Host + "/charts"})
	if got := subchartVersions(mustLoad(t, helmchart.Source{Chart: dir, PlainHTTP: true})); got["ocichild"] != "0.1.0" {
		t.Fatalf("subcharts %v, want ocichild 0.1.0", got)
	}

	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	for _, wrong := range []helmchart.Source{
		{Repository: repo.URL, Chart: "app", PlainHTTP: true},
		{Chart: repo.URL + "/app-1.0.0.tgz", PlainHTTP: true},
	} {
		assertContains(t, loadError(t, wrong), "plain_http applies to oci:// registries only")
	}
}
