package connection

import (
	"context"
	"encoding/base64"
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
		Kubeconfig: types.StringNull(), Context: types.StringNull(), ProxyURL: types.StringNull(),
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
