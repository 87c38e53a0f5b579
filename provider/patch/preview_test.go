package patch_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/patch"
)

// The local preview used when the server cannot dry-run must predict exactly
// what the server's own dry run predicts.
func TestPreviewLocallyMatchesServerDryRun(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "helm", deployments, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: a, operator: Exists}]
      containers:
        - {name: web, image: nginx:1.27, env: [{name: A, value: "1"}], ports: [{containerPort: 80}]}
        - {name: sidecar, image: envoy:v1.30}
`)
	cl := localcluster.Shared(t)
	m := connection.Model{
		Host: types.StringValue(cl.Host), ClusterCACertificate: types.StringValue(string(cl.CAPEM)), Token: types.StringValue(cl.Token),
		ClientCertificate: types.StringNull(), ClientKey: types.StringNull(), Insecure: types.BoolNull(),
		Kubeconfig: types.StringNull(), KubeconfigFile: types.StringNull(), Context: types.StringNull(), ProxyURL: types.StringNull(),
		Exec: types.ObjectNull(connection.AttrTypes["exec"].(types.ObjectType).AttrTypes),
	}
	c, err := connection.NewCache().Client(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(`
spec:
  template:
    spec:
      tolerations: [{key: b, operator: Exists}]
      containers:
        - name: web
          env: [{name: B, value: "2"}]
          ports: [{containerPort: 8080}]
`), &obj); err != nil {
		t.Fatal(err)
	}
	target := manifest.Identity{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}
	local, server, err := patch.PreviewBoth(context.Background(), c, target, obj)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(local, server) {
		t.Fatalf("local preview differs from the server's dry run:\nlocal:  %v\nserver: %v", local, server)
	}
	if len(local) < 5 {
		t.Fatalf("preview too small to mean anything: %v", local)
	}
}
