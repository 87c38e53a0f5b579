package connection

import (
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ForImport is the connection an import reads through: the provider's
// default (useDefault) when it has one and no context is named, else the
// kubeconfig files of $KUBECONFIG, or ~/.kube/config, by path, in the
// context named (their current-context when none is).
func (c *Cache) ForImport(kubeContext string) (conn Model, useDefault bool, err error) {
	conn = Model{
		Host: types.StringNull(), ClusterCACertificate: types.StringNull(), Token: types.StringNull(),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull(), Insecure: types.BoolNull(),
		Kubeconfig: types.StringNull(), KubeconfigFile: types.StringNull(), Context: types.StringNull(), ProxyURL: types.StringNull(),
		Exec: types.ObjectNull(ExecAttrTypes),
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
