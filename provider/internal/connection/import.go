package connection

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// SplitImportID splits an import id of the form [<context>#]<rest> into the
// kubeconfig context it names ("" when none) and the rest, which each
// resource reads its own way. Every resource that imports takes a context so.
func SplitImportID(id string) (kubeContext, rest string) {
	if i := strings.LastIndex(id, "#"); i >= 0 {
		return id[:i], id[i+1:]
	}
	return "", id
}

// Imported is the cluster_connection an imported resource records: none
// (null) when it was read through the provider's default, since the
// resource then has no connection of its own; else conn, as ForImport made
// it. (conn is empty for the default: converting it would fail.)
func Imported(ctx context.Context, conn Model, useDefault bool) (types.Object, diag.Diagnostics) {
	if useDefault {
		return types.ObjectNull(AttrTypes), nil
	}
	return conn.ToObject(ctx)
}

// ForImport is the connection an import reads through: the provider's
// default (useDefault) when it has one and no context is named, else the
// kubeconfig files of $KUBECONFIG, or ~/.kube/config, by path, in the
// context named (their current-context when none is).
func (c *Cache) ForImport(kubeContext string) (conn Model, useDefault bool, err error) {
	conn = Model{
		Host: types.StringNull(), ClusterCACertificate: types.StringNull(), Token: types.StringNull(),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull(), Insecure: types.BoolNull(),
		Kubeconfig: types.StringNull(), KubeconfigFile: types.StringNull(), Context: types.StringNull(), ProxyURL: types.StringNull(),
		Exec: types.ObjectNull(ExecAttrTypes), RequestTimeout: types.StringNull(),
		ClusterID: types.StringNull(),
	}
	if kubeContext == "" && c != nil && c.HasDefault() {
		return Model{}, true, nil
	}
	p := os.Getenv("KUBECONFIG")
	if p == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return conn, false, err
		}
		p = filepath.Join(home, ".kube", "config")
	}
	conn.KubeconfigFile = types.StringValue(p)
	if kubeContext != "" {
		conn.Context = types.StringValue(kubeContext)
	}
	return conn, false, nil
}

// NamespacedImport is what an import by `[<context>#]<namespace>/<name>`
// reads through: the id's parts, a client by ForImport's rules, and the
// cluster_connection to record (Imported). what and example name the
// object for the error an id of another form gets ("the release", e.g.
// "monitoring/prometheus"). ok is false when diags holds why not.
type NamespacedImport struct {
	Namespace, Name string
	Client          *Client
	Connection      types.Object
}

// ImportNamespaced parses id and connects for it, as NamespacedImport says.
func (c *Cache) ImportNamespaced(ctx context.Context, id, what, example string, diags *diag.Diagnostics) (NamespacedImport, bool) {
	kubeContext, rest := SplitImportID(id)
	ns, name, ok := strings.Cut(rest, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		diags.AddError("Invalid import id", fmt.Sprintf("%q is not [<context>#]<namespace>/<name>: give the namespace and "+
			"name of %s, e.g. %s.", id, what, example))
		return NamespacedImport{}, false
	}
	conn, useDefault, err := c.ForImport(kubeContext)
	if err != nil {
		diags.AddError("No kubeconfig to import with", err.Error())
		return NamespacedImport{}, false
	}
	client, err := c.Client(ctx, conn)
	if err != nil {
		diags.AddError("Cannot connect for import", err.Error())
		return NamespacedImport{}, false
	}
	recorded, d := Imported(ctx, conn, useDefault)
	diags.Append(d...)
	return NamespacedImport{Namespace: ns, Name: name, Client: client, Connection: recorded}, !diags.HasError()
}
