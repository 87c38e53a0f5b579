package yamldocs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`

const widget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: big
`

const gadget = `apiVersion: example.com/v1
kind: Gadget
metadata:
  name: small
  namespace: prod
`

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

func TestClassifyWithoutCluster(t *testing.T) {
	ms := mustSplit(t, strings.Join([]string{widget, configMap, widgetCRD, namespace, clusterRole, deployment}, "---\n"))
	got, err := Classify(ms, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := keys(got.CRDs); !slices.Equal(k, []string{"apiextensions.k8s.io/CustomResourceDefinition/widgets.example.com"}) {
		t.Errorf("crds = %v", k)
	}
	if k := keys(got.ClusterScoped); !slices.Equal(k, []string{"core/Namespace/prod", "example.com/Widget/big", "rbac.authorization.k8s.io/ClusterRole/reader"}) {
		t.Errorf("cluster_scoped = %v", k)
	}
	if k := keys(got.Namespaced); !slices.Equal(k, []string{"apps/Deployment/prod/web", "core/ConfigMap/prod/settings"}) {
		t.Errorf("namespaced = %v", k)
	}
	const want = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod"},"spec":{"replicas":2}}`
	if got := got.Namespaced["apps/Deployment/prod/web"]; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

func TestClassifyUnknownKindNamesDocumentAndRemedy(t *testing.T) {
	ms := mustSplit(t, namespace+"---\n"+gadget)
	_, err := Classify(ms, nil)
	if err == nil {
		t.Fatal("unknown kind accepted")
	}
	for _, want := range []string{"Gadget.example.com", "content document 2 (line 6)", "Set cluster_connection", "CustomResourceDefinition"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

type fakeCluster struct {
	scopes map[schema.GroupKind]bool
	asked  []schema.GroupKind
	err    error
}

func (f *fakeCluster) Namespaced(gk schema.GroupKind) (bool, bool, error) {
	f.asked = append(f.asked, gk)
	ns, ok := f.scopes[gk]
	return ns, ok, f.err
}

func TestClassifyAsksTheClusterOncePerKind(t *testing.T) {
	cluster := &fakeCluster{scopes: map[schema.GroupKind]bool{
		{Group: "example.com", Kind: "Gadget"}: false, // cluster-scoped in this cluster
		{Group: "", Kind: "ConfigMap"}:         true,
	}}
	other := strings.ReplaceAll(gadget, "small", "tiny")
	ms := mustSplit(t, strings.Join([]string{gadget, other, widgetCRD, widget, configMap, namespace}, "---\n"))
	got, err := Classify(ms, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if k := keys(got.ClusterScoped); !slices.Equal(k, []string{"core/Namespace/prod", "example.com/Gadget/prod/small", "example.com/Gadget/prod/tiny", "example.com/Widget/big"}) {
		t.Errorf("cluster_scoped = %v", k)
	}
	// Widget comes from its CRD in the input; Namespace, which this cluster does
	// not report, from the built-in table; Gadget is asked once for two objects.
	want := []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Namespace"}, {Group: "example.com", Kind: "Gadget"}}
	if !slices.Equal(cluster.asked, want) {
		t.Errorf("asked the cluster about %v, want %v", cluster.asked, want)
	}

	cluster = &fakeCluster{err: errors.New("connection refused")}
	_, err = Classify(mustSplit(t, gadget), cluster)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("cluster error not reported: %v", err)
	}
	_, err = Classify(mustSplit(t, gadget), &fakeCluster{})
	if err == nil || !strings.Contains(err.Error(), "the cluster does not serve it") {
		t.Fatalf("kind unknown to the cluster: %v", err)
	}
}

func TestClassifyInNamespacePlacesWhatSetsNoNamespace(t *testing.T) {
	const unplaced = `apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  labels: {a: "<b> & ü"}
data: {big: "9007199254740993"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: viewer
`
	ms := mustSplit(t, unplaced+"---\n"+deployment)
	got, err := ClassifyInNamespace(ms, nil, "team")
	if err != nil {
		t.Fatal(err)
	}
	if k := keys(got.Namespaced); !slices.Equal(k, []string{"apps/Deployment/prod/web", "core/ConfigMap/team/plain"}) {
		t.Errorf("namespaced = %v (a namespace written in the document stays)", k)
	}
	if k := keys(got.ClusterScoped); !slices.Equal(k, []string{"rbac.authorization.k8s.io/ClusterRole/viewer"}) {
		t.Errorf("cluster_scoped = %v (a cluster-scoped kind gets no namespace)", k)
	}
	const want = `{"apiVersion":"v1","data":{"big":"9007199254740993"},"kind":"ConfigMap","metadata":{"labels":{"a":"<b> & \u00fc"},"name":"plain","namespace":"team"}}`
	if b := got.Namespaced["core/ConfigMap/team/plain"]; b != want {
		t.Errorf("body = %s\nwant   %s", b, want)
	}
	if strings.Contains(got.ClusterScoped["rbac.authorization.k8s.io/ClusterRole/viewer"], "namespace") {
		t.Error("a cluster-scoped body got a namespace")
	}
}

func TestClassifyInNamespaceRefusesTwoDocumentsForOneObject(t *testing.T) {
	const twice = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: prod}
`
	_, err := ClassifyInNamespace(mustSplit(t, twice), nil, "prod")
	if err == nil || !strings.Contains(err.Error(), "core/ConfigMap/prod/settings is defined twice") ||
		!strings.Contains(err.Error(), "document 1") || !strings.Contains(err.Error(), "document 2") {
		t.Fatalf("err = %v, want both documents named", err)
	}
}
