package chartrepo_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

func clientTrusting(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no CA in the CA file")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func get(t *testing.T, client *http.Client, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestRepositoryServesIndexAndArchivesBehindAuthAndTLS(t *testing.T) {
	repo := chartrepo.NewRepository(t, chartrepo.Options{TLS: true, Username: "u", Password: "p"})
	archive, err := chartrepo.Package(chartrepo.Chart("app", "1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	repo.Add(t, archive)
	client := clientTrusting(t, repo.CAFile)

	if status, _ := get(t, client, repo.URL+"/index.yaml", "", ""); status != http.StatusUnauthorized {
		t.Fatalf("index without credentials: %d, want 401", status)
	}
	if status, _ := get(t, client, repo.URL+"/index.yaml", "u", "wrong"); status != http.StatusUnauthorized {
		t.Fatalf("index with a wrong password: %d, want 401", status)
	}
	status, index := get(t, client, repo.URL+"/index.yaml", "u", "p")
	if status != http.StatusOK || !strings.Contains(index, "charts/app-1.2.3.tgz") || !strings.Contains(index, "digest:") {
		t.Fatalf("index: %d\n%s", status, index)
	}
	status, body := get(t, client, repo.URL+"/charts/app-1.2.3.tgz", "u", "p")
	if status != http.StatusOK || body != string(archive) {
		t.Fatalf("archive: %d, %d bytes, want the %d packaged", status, len(body), len(archive))
	}
	if got := repo.Count("/charts/"); got != 1 {
		t.Fatalf("logged %d archive requests, want 1", got)
	}
}

func TestRegistryListsPushedTags(t *testing.T) {
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: "u", Password: "p"})
	for _, v := range []string{"1.0.0", "1.1.0+build.1"} {
		archive, err := chartrepo.Package(chartrepo.Chart("app", v))
		if err != nil {
			t.Fatal(err)
		}
		registry.Push(t, "charts", archive)
	}
	client := clientTrusting(t, registry.CAFile)
	url := "https://" + registry.Host + "/v2/charts/app/tags/list"
	if status, _ := get(t, client, url, "", ""); status != http.StatusUnauthorized {
		t.Fatalf("tags without credentials: %d, want 401", status)
	}
	status, tags := get(t, client, url, "u", "p")
	if status != http.StatusOK || !strings.Contains(tags, `"1.0.0"`) || !strings.Contains(tags, `"1.1.0_build.1"`) {
		t.Fatalf("tags: %d %s", status, tags)
	}
	if got := registry.Ref("charts", "app"); got != "oci://"+registry.Host+"/charts/app" {
		t.Fatalf("Ref: %s", got)
	}
}

// What a Signer signs, served beside the archive in a repository and as a
// layer in a registry, is what helm itself verifies: helm pull --verify
// takes the chart from both with the signer's keyring and refuses it with
// another key's. The tests of verify are only as good as this likeness.
func TestSignedChartsPassHelmsOwnVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the helm CLI")
	}
	helm, err := toolchain.Path(toolchain.Helm)
	if err != nil {
		t.Fatal(err)
	}
	signer, stranger := chartrepo.NewSigner(t, "chart-signer"), chartrepo.NewSigner(t, "stranger")
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.AddSigned(t, archive, signer)
	registry := chartrepo.NewRegistry(t, chartrepo.Options{PlainHTTP: true})
	registry.PushWithProvenance(t, "charts", archive, signer.Sign(t, archive))

	home := t.TempDir()
	pull := func(keyring string, args ...string) (string, error) {
		cmd := exec.Command(helm, append([]string{"pull", "--version", "1.0.0", "--verify", "--keyring", keyring, "-d", t.TempDir()}, args...)...)
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for name, args := range map[string][]string{
		"repository": {"app", "--repo", repo.URL},
		"registry":   {registry.Ref("charts", "app"), "--plain-http"},
	} {
		if out, err := pull(signer.Keyring, args...); err != nil {
			t.Errorf("helm pull --verify from the %s: %v\n%s", name, err, out)
		}
		if out, err := pull(stranger.Keyring, args...); err == nil {
			t.Errorf("helm pull --verify from the %s took a chart signed by a key not in the keyring\n%s", name, out)
		}
	}
}
