package connection

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func kubeconfigFile(t *testing.T, dir, name, context, host string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	content := "apiVersion: v1\nkind: Config\ncurrent-context: " + context + "\n" +
		"clusters: [{name: " + context + ", cluster: {server: " + host + "}}]\n" +
		"users: [{name: " + context + ", user: {token: t-" + context + "}}]\n" +
		"contexts: [{name: " + context + ", context: {cluster: " + context + ", user: " + context + "}}]\n"
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A resource without cluster_connection gets the provider's default, and a
// clear error when there is none or it is not known yet.
func TestDefaultConnection(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := kubeconfigFile(t, dir, "a", "a", "https://a.example:6443")
	c := NewCache()
	none, known, _ := FromObject(ctx, types.ObjectNull(AttrTypes))
	if !known {
		t.Fatal("a null cluster_connection must count as known (the provider default)")
	}
	if _, err := c.Client(ctx, none); !errors.Is(err, ErrNoConnection) {
		t.Fatalf("no default: err = %v", err)
	}
	m := Model{KubeconfigFile: types.StringValue(file)}
	obj, diags := nullFilled(m).ToObject(ctx)
	if diags.HasError() {
		t.Fatal(diags)
	}
	c.SetDefault(ctx, obj)
	if !c.HasDefault() {
		t.Fatal("HasDefault")
	}
	viaDefault, err := c.Client(ctx, none)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := c.Client(ctx, nullFilled(m))
	if err != nil {
		t.Fatal(err)
	}
	if viaDefault != direct {
		t.Error("the default and the same explicit connection should share one client")
	}
	c.SetDefault(ctx, types.ObjectUnknown(AttrTypes))
	if _, err := c.Client(ctx, none); !errors.Is(err, ErrDefaultUnknown) {
		t.Fatalf("unknown default: err = %v", err)
	}
}

// kubeconfig_file takes a $KUBECONFIG-style list: merged as kubectl merges,
// missing files skipped, the first current-context wins.
func TestKubeconfigFileList(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := kubeconfigFile(t, dir, "a", "a", "https://a.example:6443")
	b := kubeconfigFile(t, dir, "b", "b", "https://b.example:6443")
	list := filepath.Join(dir, "missing") + string(filepath.ListSeparator) + a + string(filepath.ListSeparator) + b
	for ctxName, host := range map[string]string{"": "https://a.example:6443", "b": "https://b.example:6443"} {
		m := nullFilled(Model{KubeconfigFile: types.StringValue(list)})
		if ctxName != "" {
			m.Context = types.StringValue(ctxName)
		}
		cfg, err := m.RESTConfig(ctx)
		if err != nil {
			t.Fatalf("context %q: %v", ctxName, err)
		}
		if cfg.Host != host {
			t.Errorf("context %q: host %s, want %s", ctxName, cfg.Host, host)
		}
	}
	m := nullFilled(Model{KubeconfigFile: types.StringValue(filepath.Join(dir, "x") + string(filepath.ListSeparator) + filepath.Join(dir, "y"))})
	if _, err := m.RESTConfig(ctx); err == nil {
		t.Error("a list of missing files should be an error")
	}
}

// nullFilled sets every unset attribute of m to null, as a configuration would.
func nullFilled(m Model) Model {
	for _, s := range []*types.String{&m.Host, &m.ClusterCACertificate, &m.Token, &m.ClientCertificate, &m.ClientKey,
		&m.Kubeconfig, &m.KubeconfigFile, &m.Context, &m.ProxyURL} {
		if s.IsNull() || (!s.IsUnknown() && s.ValueString() == "") {
			*s = types.StringNull()
		}
	}
	m.Insecure = types.BoolNull()
	m.Exec = types.ObjectNull(ExecAttrTypes)
	return m
}

// Credentials-bearing attributes are sensitive in every schema built from the
// table, and a resource's cluster_connection is optional (the provider's
// default fills in).
func TestCredentialAttributesAreSensitive(t *testing.T) {
	attr := Attribute(Input, "")
	if attr.Required || !attr.Optional {
		t.Error("a resource's cluster_connection should be optional")
	}
	for _, name := range []string{"token", "client_key", "kubeconfig", "proxy_url"} {
		if !attr.Attributes[name].IsSensitive() {
			t.Errorf("%s is not sensitive", name)
		}
	}
	exec := attr.Attributes["exec"].(schema.SingleNestedAttribute)
	for _, name := range []string{"args", "env"} {
		if !exec.Attributes[name].IsSensitive() {
			t.Errorf("exec.%s is not sensitive", name)
		}
	}
	p := ProviderAttribute("")
	if !p.Attributes["proxy_url"].IsSensitive() || !p.Attributes["token"].IsSensitive() {
		t.Error("provider cluster_connection: credentials not sensitive")
	}
}
