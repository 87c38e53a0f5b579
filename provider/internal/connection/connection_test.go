package connection

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

const fakePEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443"}
users:
- name: u
  user: {token: secret-token-value}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
`

func model() Model {
	return Model{
		Host: types.StringNull(), ClusterCACertificate: types.StringNull(), Token: types.StringNull(),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull(), Insecure: types.BoolNull(),
		Kubeconfig: types.StringNull(), KubeconfigFile: types.StringNull(), Context: types.StringNull(), ProxyURL: types.StringNull(),
		Exec: types.ObjectNull(AttrTypes["exec"].(types.ObjectType).AttrTypes),
	}
}

func TestKubeconfigContextSelection(t *testing.T) {
	ctx := context.Background()

	m := model()
	m.Kubeconfig = types.StringValue(twoContexts)
	_, err := m.RESTConfig(ctx)
	if err == nil || !strings.Contains(err.Error(), "ctx-a, ctx-b") {
		t.Fatalf("no current-context: error = %v, want it to list ctx-a, ctx-b", err)
	}

	m.Context = types.StringValue("ctx-b")
	cfg, err := m.RESTConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://b.example:6443" || cfg.BearerToken != "secret-token-value" {
		t.Fatalf("context ctx-b gave host %q", cfg.Host)
	}

	m.Context = types.StringValue("nope")
	if _, err := m.RESTConfig(ctx); err == nil || !strings.Contains(err.Error(), `"nope" is not in the kubeconfig`) {
		t.Fatalf("unknown context: error = %v", err)
	}

	withCurrent := twoContexts + "current-context: ctx-a\n"
	m.Kubeconfig, m.Context = types.StringValue(withCurrent), types.StringNull()
	if cfg, err = m.RESTConfig(ctx); err != nil || cfg.Host != "https://a.example:6443" {
		t.Fatalf("current-context: host %v err %v", cfg, err)
	}
}

func TestCertificatesAcceptPEMOrBase64AndErrorsHideSecrets(t *testing.T) {
	ctx := context.Background()
	m := model()
	m.Host = types.StringValue("https://h:6443")
	m.ClusterCACertificate = types.StringValue(base64.StdEncoding.EncodeToString([]byte(fakePEM)))
	m.Token = types.StringValue("tok-should-never-appear")
	cfg, err := m.RESTConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.CAData) != fakePEM {
		t.Fatalf("base64 CA not decoded: %q", cfg.CAData)
	}

	m.ClientKey = types.StringValue("not-a-key-secret-material")
	_, err = m.RESTConfig(ctx)
	if err == nil || strings.Contains(err.Error(), "secret-material") {
		t.Fatalf("bad client_key: error = %v; it must fail without quoting the value", err)
	}

	m.ClientKey = types.StringNull()
	m.ProxyURL = types.StringValue("ftp://user:hunter2@proxy")
	_, err = m.RESTConfig(ctx)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad proxy_url: error = %v; it must fail without quoting credentials", err)
	}
}

func TestCacheReturnsOneClientPerConnection(t *testing.T) {
	ctx := context.Background()
	c := NewCache()
	a, b := model(), model()
	a.Host, b.Host = types.StringValue("https://h:6443"), types.StringValue("https://h:6443")
	a.Token, b.Token = types.StringValue("x"), types.StringValue("x")
	ca, err := c.Client(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := c.Client(ctx, b)
	if ca != cb {
		t.Fatal("equal connections got different clients")
	}
	b.Token = types.StringValue("y")
	if cc, _ := c.Client(ctx, b); cc == ca {
		t.Fatal("different tokens share a client")
	}
}

func writeKubeconfig(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKubeconfigFileSelectsContextAndExpandsHome(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeKubeconfig(t, home, twoContexts+"current-context: ctx-a\n")

	m := model()
	m.KubeconfigFile = types.StringValue("~/kubeconfig")
	cfg, err := m.RESTConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://a.example:6443" || cfg.BearerToken != "secret-token-value" {
		t.Fatalf("current-context of ~/kubeconfig gave host %q", cfg.Host)
	}

	m.Context = types.StringValue("ctx-b")
	if cfg, err = m.RESTConfig(ctx); err != nil || cfg.Host != "https://b.example:6443" {
		t.Fatalf("context ctx-b: host %v err %v", cfg, err)
	}

	m.Context = types.StringValue("nope")
	_, err = m.RESTConfig(ctx)
	want := `"nope" is not in the kubeconfig file "` + filepath.Join(home, "kubeconfig") + `"; it has: ctx-a, ctx-b`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unknown context: error = %v, want it to contain %s", err, want)
	}
}

// kubectl reads a relative certificate path in a kubeconfig file as relative to
// the file, not to the directory the command runs in.
func TestKubeconfigFileResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "certs"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "client.pem", "client-key.pem"} {
		if err := os.WriteFile(filepath.Join(dir, "certs", f), []byte(fakePEM), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := model()
	m.KubeconfigFile = types.StringValue(writeKubeconfig(t, dir, `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://c.example:6443", certificate-authority: certs/ca.pem}
users:
- name: u
  user: {client-certificate: certs/client.pem, client-key: certs/client-key.pem}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`))
	cfg, err := m.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		cfg.CAFile: "ca.pem", cfg.CertFile: "client.pem", cfg.KeyFile: "client-key.pem",
	} {
		if got != filepath.Join(dir, "certs", want) {
			t.Errorf("got %q, want %q", got, filepath.Join(dir, "certs", want))
		}
	}
}

func TestKubeconfigFileErrorsNameThePathNotTheContent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	missing := filepath.Join(dir, "does-not-exist")

	m := model()
	m.KubeconfigFile = types.StringValue(missing)
	_, err := m.RESTConfig(ctx)
	if err == nil || !strings.Contains(err.Error(), `kubeconfig_file "`+missing+`" cannot be read: no such file or directory`) {
		t.Fatalf("missing file: error = %v", err)
	}

	m.KubeconfigFile = types.StringValue(writeKubeconfig(t, dir, "users: secret-token-value\n"))
	_, err = m.RESTConfig(ctx)
	if err == nil || !strings.Contains(err.Error(), "is not a valid kubeconfig") || strings.Contains(err.Error(), "secret-token-value") {
		t.Fatalf("invalid file: error = %v; it must fail without quoting the content", err)
	}

	m.KubeconfigFile = types.StringValue(writeKubeconfig(t, dir, twoContexts))
	m.Kubeconfig = types.StringValue(twoContexts)
	_, err = m.RESTConfig(ctx)
	if err == nil || !strings.Contains(err.Error(), "sets both kubeconfig and kubeconfig_file") {
		t.Fatalf("both set: error = %v", err)
	}
	if _, err := NewCache().Client(ctx, m); err == nil {
		t.Fatal("the cache built a client for a connection with both kubeconfig and kubeconfig_file")
	}
}

// Rotated credentials are usually written over the same file; the next client
// must use them rather than the one cached for the old content.
func TestCacheRereadsAnEditedKubeconfigFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := NewCache()
	m := model()
	m.KubeconfigFile = types.StringValue(writeKubeconfig(t, dir, twoContexts+"current-context: ctx-a\n"))
	first, err := c.Client(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Client(ctx, m); again != first {
		t.Fatal("an unchanged kubeconfig file got a second client")
	}
	writeKubeconfig(t, dir, twoContexts+"current-context: ctx-b\n")
	if edited, _ := c.Client(ctx, m); edited == first {
		t.Fatal("an edited kubeconfig file kept the client built from its old content")
	}
}
