package connection

import (
	"context"
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
