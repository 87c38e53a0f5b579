package helmchart_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// signedSources are a signed app 1.0.0 in each place a chart comes from,
// behind the test password where a server is: an HTTP repository (.prov
// beside the archive), a chart URL whose file name is not the package's
// (downloads/app.tgz, signed as app-1.0.0.tgz), an OCI registry (the
// provenance layer) and a local .tgz with its .prov beside it.
func signedSources(t *testing.T, signer *chartrepo.Signer) map[string]helmchart.Source {
	t.Helper()
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	prov := signer.Sign(t, archive)
	creds := chartrepo.Options{Username: testUser, Password: testPassword, TLS: true}

	repo := chartrepo.NewRepository(t, creds)
	repo.AddSigned(t, archive, signer)
	server := chartrepo.NewRepository(t, creds)
	server.Serve("downloads/app.tgz", archive)
	server.Serve("downloads/app.tgz.prov", prov)
	registry := chartrepo.NewRegistry(t, creds)
	registry.PushWithProvenance(t, "charts", archive, prov)
	local := filepath.Join(t.TempDir(), "app-1.0.0.tgz")
	writeFile(t, local, archive)
	writeFile(t, local+".prov", prov)

	return map[string]helmchart.Source{
		"repository": {Repository: repo.URL, Chart: "app", CAFile: repo.CAFile, Username: testUser, Password: testPassword},
		"url":        {Chart: server.URL + "/downloads/app.tgz", CAFile: server.CAFile, Username: testUser, Password: testPassword},
		"registry":   {Chart: registry.Ref("charts", "app"), CAFile: registry.CAFile, Username: testUser, Password: testPassword},
		"local":      {Chart: local},
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func verifying(src helmchart.Source, keyring string) helmchart.Source {
	src.Verify, src.Keyring = true, keyring
	return src
}

// A signed chart verifies from each source, the second time from the cache
// too; with a keyring that lacks the signer's key it is refused, naming
// the keyring, even though the archive is kept by then.
func TestProvenanceVerifies(t *testing.T) {
	isolatedCache(t)
	signer, stranger := chartrepo.NewSigner(t, "chart-signer"), chartrepo.NewSigner(t, "stranger")
	for name, src := range signedSources(t, signer) {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				if c := mustLoad(t, verifying(src, signer.Keyring)); c.Version != "1.0.0" {
					t.Fatalf("loaded %s, want 1.0.0", c.Version)
				}
			}
			// A chart URL's apply pins the version and asks the server
			// nothing: the kept .prov is checked all the same.
			pinned := verifying(src, stranger.Keyring)
			pinned.Version = "1.0.0"
			assertContains(t, loadError(t, pinned), "is not in the keyring "+stranger.Keyring, "gpg --export")
		})
	}
}

// An archive that is not the one its provenance file signs is refused, from
// each source; the HTTP repository's index gives no digest, or the index
// would refuse it first.
func TestProvenanceRefusesTamperedArchive(t *testing.T) {
	isolatedCache(t)
	signer := chartrepo.NewSigner(t, "chart-signer")
	signed := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	prov := signer.Sign(t, signed)
	altered := chartrepo.Chart("app", "1.0.0")
	altered.Metadata.Description = "not what was signed"
	tampered := chartrepo.MustPackage(t, altered)

	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddEntry(t, tampered, chartrepo.Entry{NoDigest: true})
	repo.Serve("charts/app-1.0.0.tgz.prov", prov)
	server := chartrepo.NewRepository(t, chartrepo.Options{})
	server.Serve("app-1.0.0.tgz", tampered)
	server.Serve("app-1.0.0.tgz.prov", prov)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{})
	registry.PushWithProvenance(t, "charts", tampered, prov)
	local := filepath.Join(t.TempDir(), "app-1.0.0.tgz")
	writeFile(t, local, tampered)
	writeFile(t, local+".prov", prov)

	for name, src := range map[string]helmchart.Source{
		"repository": {Repository: repo.URL, Chart: "app"},
		"url":        {Chart: server.URL + "/app-1.0.0.tgz"},
		"registry":   {Chart: registry.Ref("charts", "app"), CAFile: registry.CAFile},
		"local":      {Chart: local},
	} {
		t.Run(name, func(t *testing.T) {
			assertContains(t, loadError(t, verifying(src, signer.Keyring)), "does not match", "provenance", "sha256 sum does not match")
		})
	}
}

// A chart without a provenance file is refused with verify, naming where
// the .prov was looked for, and loads without it.
func TestProvenanceMissing(t *testing.T) {
	isolatedCache(t)
	signer := chartrepo.NewSigner(t, "chart-signer")
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	creds := chartrepo.Options{Username: testUser, Password: testPassword}
	repo := chartrepo.NewRepository(t, creds)
	repo.Add(t, archive)
	server := chartrepo.NewRepository(t, creds)
	server.Serve("app-1.0.0.tgz", archive)
	registry := chartrepo.NewRegistry(t, creds)
	registry.Push(t, "charts", archive)
	local := filepath.Join(t.TempDir(), "app-1.0.0.tgz")
	writeFile(t, local, archive)

	for name, tc := range map[string]struct {
		src  helmchart.Source
		says []string
	}{
		"repository": {helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword},
			[]string{repo.URL + "/charts/app-1.0.0.tgz.prov", "not found, and verify = true needs it", "404", "verify = false"}},
		"url": {helmchart.Source{Chart: server.URL + "/app-1.0.0.tgz", Username: testUser, Password: testPassword},
			[]string{server.URL + "/app-1.0.0.tgz.prov", "not found, and verify = true needs it", "404", "verify = false"}},
		"registry": {helmchart.Source{Chart: registry.Ref("charts", "app"), CAFile: registry.CAFile, Username: testUser, Password: testPassword},
			[]string{registry.Ref("charts", "app") + ":1.0.0", "has no provenance", "application/vnd.cncf.helm.chart.provenance.v1.prov", "helm push"}},
		"local": {helmchart.Source{Chart: local},
			[]string{"no provenance file " + local + ".prov", "helm package --sign"}},
	} {
		t.Run(name, func(t *testing.T) {
			assertContains(t, loadError(t, verifying(tc.src, signer.Keyring)), tc.says...)
			if c := mustLoad(t, tc.src); c.Version != "1.0.0" {
				t.Fatalf("without verify loaded %s, want 1.0.0", c.Version)
			}
		})
	}
}

// A chart directory cannot be verified; the keyring is not even read.
func TestProvenanceDirectoryRefused(t *testing.T) {
	dir, err := chartrepo.WriteDir(chartrepo.Chart("app", "1.0.0"), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := loadError(t, verifying(helmchart.Source{Chart: dir}, filepath.Join(t.TempDir(), "none.gpg")))
	assertContains(t, msg, dir, "is a directory, which cannot be verified", "helm package --sign", "verify = false")
}

// A keyring that is missing, unreadable as one, or empty fails before the
// chart is fetched, naming the file; empty, keyring is helm's default under
// $GNUPGHOME.
func TestProvenanceKeyring(t *testing.T) {
	isolatedCache(t)
	signer := chartrepo.NewSigner(t, "chart-signer")
	src := signedSources(t, signer)["repository"]
	dir := t.TempDir()
	notKeys, empty := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "empty.gpg")
	writeFile(t, notKeys, []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot a key\n-----END PGP PUBLIC KEY BLOCK-----\n"))
	writeFile(t, empty, nil)
	for _, tc := range []struct {
		keyring string
		says    []string
	}{
		{filepath.Join(dir, "missing.gpg"), []string{"the keyring " + filepath.Join(dir, "missing.gpg") + " does not exist", "set keyring"}},
		{notKeys, []string{"the keyring " + notKeys + " is not an OpenPGP public keyring"}},
		{empty, []string{"the keyring " + empty + " holds no public key"}},
	} {
		assertContains(t, loadError(t, verifying(src, tc.keyring)), tc.says...)
	}

	gnupg := t.TempDir()
	t.Setenv("GNUPGHOME", gnupg)
	assertContains(t, loadError(t, verifying(src, "")), "the default keyring "+filepath.Join(gnupg, "pubring.gpg")+" does not exist")
	keyring, err := os.ReadFile(signer.Keyring)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(gnupg, "pubring.gpg"), keyring)
	mustLoad(t, verifying(src, ""))
}

// A provenance file altered after signing fails its signature, and a file
// that is not clear-signed at all (a web page where the .prov should be) is
// named as such.
func TestProvenanceRefusesAlteredProvenance(t *testing.T) {
	signer := chartrepo.NewSigner(t, "chart-signer")
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	prov := signer.Sign(t, archive)
	local := filepath.Join(t.TempDir(), "app-1.0.0.tgz")
	writeFile(t, local, archive)
	src := verifying(helmchart.Source{Chart: local}, signer.Keyring)

	writeFile(t, local+".prov", bytes.Replace(prov, []byte("version: 1.0.0"), []byte("version: 9.9.9"), 1))
	assertContains(t, loadError(t, src), "the signature in the provenance file "+local+".prov", "does not verify with the keyring "+signer.Keyring)

	writeFile(t, local+".prov", []byte("<html>Not here</html>"))
	assertContains(t, loadError(t, src), local+".prov is not a clear-signed Helm provenance file")
}

// The .prov of an archive that the index places on another host is fetched
// from there as the archive is: without the repository's credentials.
func TestProvenanceCredentialsStayOnTheRepository(t *testing.T) {
	isolatedCache(t)
	signer := chartrepo.NewSigner(t, "chart-signer")
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	elsewhere := chartrepo.NewRepository(t, chartrepo.Options{})
	elsewhere.Serve("app-1.0.0.tgz", archive)
	elsewhere.Serve("app-1.0.0.tgz.prov", signer.Sign(t, archive))
	repo := chartrepo.NewRepository(t, chartrepo.Options{Username: testUser, Password: testPassword})
	repo.AddEntry(t, archive, chartrepo.Entry{URL: elsewhere.URL + "/app-1.0.0.tgz"})

	mustLoad(t, verifying(helmchart.Source{Repository: repo.URL, Chart: "app", Username: testUser, Password: testPassword}, signer.Keyring))
	if got := elsewhere.Count(".prov"); got != 1 {
		t.Fatalf("the other host got %d requests for the .prov, want 1", got)
	}
	for _, r := range elsewhere.Requests() {
		if r.Authorization {
			t.Fatalf("%s on another host got the repository's credentials", r.Path)
		}
	}
}
