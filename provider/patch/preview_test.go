package patch_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection/connectiontest"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/merge"
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
	c := connectiontest.Local(t)
	obj := yamlObject(t, `
spec:
  template:
    spec:
      tolerations: [{key: b, operator: Exists}]
      containers:
        - name: web
          env: [{name: B, value: "2"}]
          ports: [{containerPort: 8080}]
`)
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

func yamlObject(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// assertPreviewsAgree holds the local preview of patch against the server's
// dry run, field by field, and returns it.
func assertPreviewsAgree(t *testing.T, c *connection.Client, target manifest.Identity, patchText string) map[string]string {
	t.Helper()
	local, server, err := patch.PreviewBoth(context.Background(), c, target, yamlObject(t, patchText))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(local, server) {
		t.Fatalf("local preview differs from the server's dry run:\nlocal:  %v\nserver: %v", local, server)
	}
	return local
}

// The local preview agrees with the server's dry run for each way a list
// merges: a set, an atomic list, list-maps with one key and with two (one of
// them defaulted), and a volume switched from configMap to secret by the patch
// that added it (retainKeys).
func TestPreviewLocallyMatchesServerDryRunForEachListKind(t *testing.T) {
	ns := acctest.Namespace(t)
	acctest.ApplyAs(t, "helm", deployments, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`, finalizers: [example.com/a, example.com/b]}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations: [{key: a, operator: Exists}]
      containers:
        - {name: web, image: nginx:1.27, env: [{name: A, value: "1"}], ports: [{containerPort: 80}]}
      volumes: [{name: shared, configMap: {name: shared-config}}]
`)
	t.Cleanup(func() { acctest.PatchAs(t, "helm", deployments, ns, "web", `{"metadata":{"finalizers":null}}`) })
	// What an earlier apply of the patch set, which it now switches.
	acctest.ApplyAs(t, patch.FieldManager("preview-test"), deployments, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`}
spec: {template: {spec: {volumes: [{name: mine, configMap: {name: mine-config}}]}}}
`)
	preview := assertPreviewsAgree(t, connectiontest.Local(t), manifest.Identity{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}, `
metadata: {finalizers: [example.com/c, example.com/a]}
spec:
  template:
    spec:
      tolerations: [{key: b, operator: Exists}]
      containers:
        - name: web
          env: [{name: B, value: "2"}, {name: A, value: changed}]
          ports: [{containerPort: 80, name: http}, {containerPort: 80, protocol: UDP, name: quic}]
      volumes: [{name: mine, secret: {secretName: mine-secret}}]
`)
	for _, field := range []string{
		"metadata.finalizers[=example.com/c]",
		"spec.template.spec.tolerations",
		"spec.template.spec.containers[name=web].env[name=A].value",
		"spec.template.spec.containers[name=web].ports[containerPort=80,protocol=TCP].name",
		"spec.template.spec.containers[name=web].ports[containerPort=80,protocol=UDP].name",
		"spec.template.spec.volumes[name=mine].secret.secretName",
	} {
		if _, ok := preview[field]; !ok {
			t.Errorf("the preview has no %s: %v", field, preview)
		}
	}
}

// The same for a custom resource, fresh enough that its schema is read the
// moment it is published.
func TestPreviewLocallyMatchesServerDryRunForCustomResource(t *testing.T) {
	ns := acctest.Namespace(t)
	group := strings.ToLower(acctest.Name("p")) + ".preview.k8sconnect.test"
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	acctest.ApplyAs(t, "helm", crds, fixtures.CRD(group, "Gadget", fixtures.ListKinds))
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{})
	})
	gadgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	gadget := yamlObject(t, `apiVersion: `+group+`/v1
kind: Gadget
metadata: {name: g, namespace: `+ns+`}
spec:
  members: [{name: a, weight: 1}, {name: b, weight: 1}]
  ports: [{name: web, port: 80}]
  tags: [red, green]
  rules: [{name: r1, action: allow}]
`)
	// The CRD's kind is served a moment after the CRD is established.
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		_, err = acctest.Dynamic(t).Resource(gadgets).Namespace(ns).Apply(context.Background(), "g",
			&unstructured.Unstructured{Object: gadget}, metav1.ApplyOptions{FieldManager: "helm", Force: true})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	// Its OpenAPI v3 document is published a moment later still.
	c := connectiontest.Local(t)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		_, err = merge.Load(c.Discovery, gadgets.GroupVersion().WithKind("Gadget"))
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	preview := assertPreviewsAgree(t, c, manifest.Identity{APIVersion: group + "/v1", Kind: "Gadget", Namespace: ns, Name: "g"}, `
spec:
  members: [{name: c}, {name: a, weight: 2}]
  ports: [{name: www, port: 80}, {name: dns, port: 53, protocol: UDP}]
  tags: [blue, red]
  rules: [{name: r2, action: deny}]
`)
	for _, field := range []string{
		"spec.members[name=a].weight",
		"spec.members[name=c].name",
		"spec.ports[port=80,protocol=TCP].name",
		"spec.ports[port=53,protocol=UDP].name",
		"spec.tags[=blue]",
		"spec.rules",
	} {
		if _, ok := preview[field]; !ok {
			t.Errorf("the preview has no %s: %v", field, preview)
		}
	}
}
