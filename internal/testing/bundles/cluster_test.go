package bundles

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { localcluster.Main(m) }

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestAcceptedByAPIServer installs a bundle on the embedded cluster in its
// three steps with Server-Side Apply, as kubectl apply --server-side does:
// the API server must take every CRD as a structural schema (it refuses
// others) and every object, custom resources included. Then it applies the
// bundle with the largest CRD widened, and removes it all.
func TestAcceptedByAPIServer(t *testing.T) {
	cfg := localcluster.Shared(t).RESTConfig()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(disco)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	ctx := context.Background()
	b := New(fmt.Sprintf("bundles-test-%d", time.Now().UnixNano()%1e6))

	type applied struct {
		res       schema.GroupVersionResource
		namespace string
		name      string
	}
	var made []applied
	t.Cleanup(func() {
		// Namespaced objects go with their namespace; the rest one by one,
		// CRDs last, as a destroy orders them.
		for i := len(made) - 1; i >= 0; i-- {
			if a := made[i]; a.namespace == "" {
				_ = dyn.Resource(a.res).Delete(ctx, a.name, metav1.DeleteOptions{})
			}
		}
	})
	apply := func(doc string) {
		t.Helper()
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v\n%.400s", err, doc)
		}
		m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		// A CRD is Established before discovery serves its kind: the API
		// server publishes that on its own time (seen under load on a 2-core
		// machine). Ask again, as kubectl and the provider do.
		for deadline := time.Now().Add(30 * time.Second); meta.IsNoMatchError(err) && time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
			mapper.Reset()
			m, err = mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		}
		if err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if u.GetNamespace() != b.Name() {
				t.Fatalf("%s %s: namespace %q, want the bundle's %q", u.GetKind(), u.GetName(), u.GetNamespace(), b.Name())
			}
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		} else if u.GetNamespace() != "" {
			t.Fatalf("cluster-scoped %s %s has a namespace", u.GetKind(), u.GetName())
		}
		if _, err := ri.Apply(ctx, u.GetName(), &u, metav1.ApplyOptions{FieldManager: "bundles-test", Force: true}); err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		made = append(made, applied{m.Resource, u.GetNamespace(), u.GetName()})
	}

	for _, doc := range b.Documents(CRDs) {
		apply(doc)
	}
	for _, a := range made {
		waitEstablished(t, dyn, a.name)
	}
	mapper.Reset() // the CRDs' kinds are served now
	for _, s := range []Step{ClusterScoped, Namespaced} {
		for _, doc := range b.Documents(s) {
			apply(doc)
		}
	}

	widened := b.WithWidenedCRD()
	name, field := widened.LargestCRD()
	for _, doc := range widened.Documents(CRDs) {
		apply(doc)
	}
	got, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasInt64(got.Object, field) {
		t.Fatalf("%s: property %s is not int64 after the widened bundle was applied", name, field)
	}
	waitEstablished(t, dyn, name)
}

func waitEstablished(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		u, err := dyn.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if u != nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
					return
				}
				if c, ok := c.(map[string]any); ok && c["type"] == "NonStructuralSchema" {
					t.Fatalf("%s: %v", name, c["message"])
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD %s is not Established after a minute: %v", name, u)
		}
	}
}

// hasInt64 reports whether some schema in v has a property field of format
// int64.
func hasInt64(v any, field string) bool {
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if p, ok := props[field].(map[string]any); ok && p["format"] == "int64" {
				return true
			}
		}
		for _, e := range v {
			if hasInt64(e, field) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasInt64(e, field) {
				return true
			}
		}
	}
	return false
}
