package helmchart_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// The versions every version test picks from; 2.1.0-rc.1 is the newest, and
// a pre-release.
var appVersions = []string{"1.0.0", "1.1.0", "1.2.0-beta.1", "2.0.0", "2.1.0-rc.1"}

func TestRepositoryVersionResolution(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", appVersions...)
	for _, tc := range []struct {
		name    string
		version string
		devel   bool
		want    string
	}{
		{"exact", "1.0.0", false, "1.0.0"},
		{"exact pre-release without devel", "1.2.0-beta.1", false, "1.2.0-beta.1"},
		{"caret constraint", "^1.0.0", false, "1.1.0"},
		{"range", ">=1.0.0 <2.0.0", false, "1.1.0"},
		{"latest stable", "", false, "2.0.0"},
		{"latest with devel", "", true, "2.1.0-rc.1"},
		{"constraint with devel", "^1.0.0", true, "1.2.0-beta.1"},
		{"x-range", "2.x", false, "2.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, helmchart.Source{Repository: repo.URL, Chart: "app", Version: tc.version, Devel: tc.devel})
			if c.Version != tc.want || c.Metadata.Version != tc.want {
				t.Fatalf("loaded %s (Chart.yaml %s), want %s", c.Version, c.Metadata.Version, tc.want)
			}
			if c.Name() != "app" {
				t.Fatalf("loaded chart %q, want app", c.Name())
			}
		})
	}
}

func TestRepositoryNothingMatches(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", appVersions...)
	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app", Version: "^3.0.0"})
	// Newest first, pre-releases among them, and the way to get those.
	assertContains(t, msg, `"^3.0.0"`, "2.1.0-rc.1, 2.0.0, 1.2.0-beta.1, 1.1.0, 1.0.0", "devel", repo.URL)

	msg = loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app", Version: "not a version"})
	assertContains(t, msg, "neither a version nor a semver constraint")
}

func TestRepositoryManyVersionsListsTheNewestFew(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0")
	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app", Version: "~1.0"})
	assertContains(t, msg, "0.7.0, 0.6.0, 0.5.0, 0.4.0, 0.3.0, … (7 in all)")
	if strings.Contains(msg, "0.1.0") {
		t.Errorf("error lists every version: %s", msg)
	}
}

func TestRepositoryChartMissing(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("other", "1.0.0")))
	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "missing"})
	assertContains(t, msg, `chart "missing" is not in `+repo.URL, "app, other")
}

func TestRepositoryWithoutIndex(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	msg := loadError(t, helmchart.Source{Repository: repo.URL + "/not-here", Chart: "app"})
	assertContains(t, msg, repo.URL+"/not-here/index.yaml", "404", "no index.yaml there")
}

func TestRepositoryNotAnIndex(t *testing.T) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.Serve("page/index.yaml", []byte("<html><body>a web page</body></html>\n"))
	msg := loadError(t, helmchart.Source{Repository: repo.URL + "/page", Chart: "app"})
	assertContains(t, msg, "is not a Helm chart repository index")
}

func TestRepositoryUnreachable(t *testing.T) {
	isolatedCache(t)
	// A port that was just free: nothing listens there.
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + listener.Addr().String() + "/charts"
	_ = listener.Close()
	msg := loadError(t, helmchart.Source{Repository: url, Chart: "app", Username: testUser, Password: testPassword})
	assertContains(t, msg, "cannot reach "+url+"/index.yaml", "connection refused")
}

func TestRepositoryBasicAuth(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "app", "1.0.0")

	c := mustLoad(t, helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword})
	if c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}

	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword + "-wrong"})
	assertContains(t, msg, "refused the credentials", "401", repo.URL)
	if strings.Contains(msg, testPassword+"-wrong") {
		t.Fatalf("the error gives away the wrong password: %s", msg)
	}

	msg = loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app"})
	assertContains(t, msg, "requires credentials", "401")
}

// Credentials written into the URL are used, and are never shown again.
func TestRepositoryCredentialsInURL(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "app", "1.0.0")
	withUser := strings.Replace(repo.URL, "http://", "http://"+testUser+":"+testPassword+"@", 1)
	if c := mustLoad(t, helmchart.Source{Repository: withUser, Chart: "app"}); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	msg := loadError(t, helmchart.Source{Repository: withUser, Chart: "missing"})
	assertContains(t, msg, repo.URL)

	wrong := strings.Replace(repo.URL, "http://", "http://"+testUser+":"+testPassword+"-wrong@", 1)
	msg = loadError(t, helmchart.Source{Repository: wrong, Chart: "app"})
	assertContains(t, msg, "refused the credentials")
}

func TestRepositoryTLS(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{TLS: true, Username: testUser, Password: testPassword}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword}

	msg := loadError(t, src)
	assertContains(t, msg, "not trusted", "repository_ca_file", repo.URL)

	src.CAFile = repo.CAFile
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

func TestRepositoryClientCertificate(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{ClientCertificates: true}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app", CAFile: repo.CAFile}
	assertContains(t, loadError(t, src), "did not accept the client certificate", "repository_cert_file")

	src.CertFile = repo.ClientCertFile
	assertContains(t, loadError(t, src), "both repository_cert_file and repository_key_file")

	src.KeyFile = repo.ClientKeyFile
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
}

// An archive whose bytes are not what the index's digest says is refused,
// and not cached: the next load with a right index downloads it again.
func TestRepositoryDigestMismatch(t *testing.T) {
	cacheDir := isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	repo.AddEntry(t, archive, chartrepo.Entry{Digest: strings.Repeat("ab", 32)})

	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app"})
	assertContains(t, msg, "app 1.0.0", strings.Repeat("ab", 32), "not using it")
	assertCacheHolds(t, cacheDir, 0)

	repo.Add(t, archive)
	mustLoad(t, helmchart.Source{Repository: repo.URL, Chart: "app"})
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 2 {
		t.Fatalf("the archive was downloaded %d times, want 2", got)
	}
}

func TestRepositoryBadDigestInIndex(t *testing.T) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddEntry(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")), chartrepo.Entry{Digest: "md5:abc"})
	assertContains(t, loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app"}), "bad digest", "not a sha256")
}

// An archive that is not the version the index lists is refused, so the
// version recorded is the version rendered.
func TestRepositoryArchiveIsAnotherVersion(t *testing.T) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddEntry(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "2.0.0")), chartrepo.Entry{NoDigest: true})
	// Served in place of the archive AddEntry put there.
	repo.Serve("charts/app-2.0.0.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))
	msg := loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app", Version: "2.0.0"})
	assertContains(t, msg, "listed as app 2.0.0 holds chart app 1.0.0")
}

// A chart URL on another host (another port is another origin) gets no
// credentials, whether the index names it or the repository redirects there.
func TestRepositoryCredentialsStayOnTheRepositoryHost(t *testing.T) {
	for _, pass := range []bool{false, true} {
		t.Run(fmt.Sprintf("pass_credentials=%v", pass), func(t *testing.T) {
			credentialsAcrossHosts(t, pass)
		})
	}
}

// credentialsAcrossHosts loads a chart listed on another host and one
// redirected there, and checks the other host gets the credentials only
// when pass is set.
func credentialsAcrossHosts(t *testing.T, pass bool) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{Username: testUser, Password: testPassword})
	elsewhere := chartrepo.NewRepository(t, chartrepo.Options{})
	src := helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword, PassCredentials: pass}

	listed := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	elsewhere.Serve("mirror/app-1.0.0.tgz", listed)
	repo.AddEntry(t, listed, chartrepo.Entry{URL: elsewhere.URL + "/mirror/app-1.0.0.tgz"})

	redirected := chartrepo.MustPackage(t, chartrepo.Chart("app", "2.0.0"))
	elsewhere.Serve("mirror/app-2.0.0.tgz", redirected)
	repo.Add(t, redirected)
	repo.Redirect("charts/app-2.0.0.tgz", elsewhere.URL+"/mirror/app-2.0.0.tgz")

	for _, version := range []string{"1.0.0", "2.0.0"} {
		if c := mustLoad(t, withVersion(src, version)); c.Version != version {
			t.Fatalf("loaded %s, want %s", c.Version, version)
		}
	}
	requests := elsewhere.Requests()
	if len(requests) != 2 {
		t.Fatalf("the other host got %d requests, want 2: %+v", len(requests), requests)
	}
	for _, r := range requests {
		if r.Authorization != pass {
			t.Errorf("the other host got credentials %v with %s; pass_credentials is %v", r.Authorization, r.Path, pass)
		}
	}
	for _, r := range repo.Requests() {
		if !r.Authorization {
			t.Errorf("the repository got %s without credentials", r.Path)
		}
	}
}

func withVersion(src helmchart.Source, version string) helmchart.Source {
	src.Version = version
	return src
}

// Two loads of one chart download it once; a new version, or the same
// version republished with another digest, is downloaded.
func TestRepositoryCache(t *testing.T) {
	cacheDir := isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword}

	first := mustLoad(t, src)
	second := mustLoad(t, src)
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 1 {
		t.Fatalf("two loads downloaded the archive %d times, want 1", got)
	}
	if first.Version != second.Version || first.Values["greeting"] != second.Values["greeting"] {
		t.Fatal("the cached chart differs from the downloaded one")
	}
	assertCacheHolds(t, cacheDir, 1)

	// Republished under the same version with other content: another digest.
	changed := chartrepo.Chart("app", "1.0.0")
	changed.Metadata.Description = "republished"
	repo.Add(t, chartrepo.MustPackage(t, changed))
	if c := mustLoad(t, src); c.Metadata.Description != "republished" {
		t.Fatal("a stale cache entry was used for a new digest")
	}
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 2 {
		t.Fatalf("the republished archive was downloaded %d times in all, want 2", got)
	}

	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "1.1.0")))
	if c := mustLoad(t, src); c.Version != "1.1.0" {
		t.Fatalf("loaded %s after 1.1.0 was published", c.Version)
	}
	if got := repo.Count("/charts/app-1.1.0.tgz"); got != 1 {
		t.Fatalf("1.1.0 was downloaded %d times, want 1", got)
	}
}

// An index without digests still caches, by URL, name and version.
func TestRepositoryCacheWithoutDigest(t *testing.T) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddEntry(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")), chartrepo.Entry{NoDigest: true})
	src := helmchart.Source{Repository: repo.URL, Chart: "app"}
	mustLoad(t, src)
	mustLoad(t, src)
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 1 {
		t.Fatalf("two loads downloaded the archive %d times, want 1", got)
	}
}

// A corrupted cache entry is noticed and replaced.
func TestRepositoryCorruptCacheEntry(t *testing.T) {
	cacheDir := isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app"}
	mustLoad(t, src)
	corruptCache(t, cacheDir)
	if c := mustLoad(t, src); c.Version != "1.0.0" {
		t.Fatalf("loaded %s", c.Version)
	}
	if got := repo.Count("/charts/app-1.0.0.tgz"); got != 2 {
		t.Fatalf("the archive was downloaded %d times, want 2 (once more after the corruption)", got)
	}
}

// The index is asked for on every load, but a repository that gives an ETag
// answers the second "not modified", and a changed index is fetched whole.
func TestRepositoryIndexRevalidated(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{Username: testUser, Password: testPassword}, "app", "1.0.0")
	src := helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword}
	mustLoad(t, src)
	mustLoad(t, src)
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "1.1.0")))
	if c := mustLoad(t, src); c.Version != "1.1.0" {
		t.Fatalf("loaded %s after 1.1.0 was published", c.Version)
	}
	var statuses []int
	for _, r := range repo.Requests() {
		if r.Path == "/index.yaml" {
			statuses = append(statuses, r.Status)
		}
	}
	if want := []int{200, 304, 200}; !slices.Equal(statuses, want) {
		t.Fatalf("index.yaml answered %v, want %v", statuses, want)
	}
}

func TestRepositoryCancelled(t *testing.T) {
	isolatedCache(t)
	repo := repositoryWith(t, chartrepo.Options{}, "app", "1.0.0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := helmchart.Load(ctx, helmchart.Source{Repository: repo.URL, Chart: "app"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context: %v, want context.Canceled", err)
	}
}

// An index may point anywhere over http(s), but nowhere else: not at a file
// on the machine that loads the chart.
func TestRepositoryIndexPointsAtAFile(t *testing.T) {
	isolatedCache(t)
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddEntry(t, chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")), chartrepo.Entry{URL: "file:///etc/passwd"})
	assertContains(t, loadError(t, helmchart.Source{Repository: repo.URL, Chart: "app"}), "bad URL", "not an http(s) URL")
}

// A URL with credentials that does not parse is quoted without them.
func TestUnparseableURLWithCredentials(t *testing.T) {
	isolatedCache(t)
	for _, src := range []helmchart.Source{
		{Repository: "https://reader:bad%zzsecret@127.0.0.1/charts", Chart: "app"},
		{Chart: "oci://reader:bad%zzsecret@127.0.0.1/charts/app"},
		{Repository: "oci://reader:bad%zzsecret@127.0.0.1/charts", Chart: "app"},
		{Chart: "oci://reader:bad%zzsecret@127.0.0.1:99999/charts/app"},
	} {
		msg := loadError(t, src)
		if strings.Contains(msg, "zzsecret") || strings.Contains(msg, "reader") {
			t.Errorf("the error quotes the URL's credentials: %s", msg)
		}
	}
}
