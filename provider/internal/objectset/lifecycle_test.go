package objectset

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection/connectiontest"
	"github.com/k8sconnect/k8sconnect/provider/internal/deletion"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

func TestMain(m *testing.M) { localcluster.Main(m) }

func fromYAML(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const crdTemplate = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - {name: v1alpha1, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

func TestServedKinds(t *testing.T) {
	got := connection.ServedKinds(fromYAML(t, fmt.Sprintf(crdTemplate, "example.com")))
	want := []schema.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "Gadget"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("served kinds: got %v, want %v (a version not served is no kind to wait for)", got, want)
	}
}

// TestWaitEstablished_kindUsableAtOnce applies a custom resource the moment
// WaitEstablished returns for its CRD, as a set and a release do, for a
// score of CRDs at once (a few do not show it on a quiet machine): the API
// server marks a CRD Established before its discovery lists the kind, and a
// set's apply failed in CI in that window.
func TestWaitEstablished_kindUsableAtOnce(t *testing.T) {
	c := connectiontest.Local(t)
	ctx := context.Background()
	run := time.Now().UnixNano()
	const n = 20
	errs := make([]error, n)
	groups := make([]string, n)
	crds, crs := make([]*unstructured.Unstructured, n), make([]*unstructured.Unstructured, n)
	for i := range n {
		groups[i] = fmt.Sprintf("wait-%d-%d.k8sconnect.test", run, i)
		crds[i] = fromYAML(t, fmt.Sprintf(crdTemplate, groups[i]))
		crs[i] = fromYAML(t, fmt.Sprintf("{apiVersion: %s/v1, kind: Gadget, metadata: {name: one, namespace: default}}", groups[i]))
	}
	InParallel(n, func(i int) {
		group := groups[i]
		crd, err := ssa.Apply(ctx, c, crds[i], ssa.Options{FieldManager: "objectset-test"})
		if err != nil {
			errs[i] = err
			return
		}
		t.Cleanup(func() {
			_ = deletion.Delete(context.Background(), c, manifest.IdentityOf(crd), crd.GetUID(), "")
		})
		if err := WaitEstablished(ctx, c, crd, time.Minute); err != nil {
			errs[i] = fmt.Errorf("waiting for %s: %w", group, err)
			return
		}
		if _, err := ssa.Apply(ctx, c, crs[i], ssa.Options{FieldManager: "objectset-test"}); err != nil {
			errs[i] = fmt.Errorf("applying a Gadget of %s right after WaitEstablished: %w", group, err)
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// A CRD seen Established maps its kind before discovery lists it, in each
// version it serves and no other; once discovery confirms the kind gone (its
// CRD deleted), the learned mapping goes too and the kind is unknown again.
func TestLearnEstablished_mapsUntilDiscoverySaysGone(t *testing.T) {
	c := connectiontest.Local(t)
	group := fmt.Sprintf("learn-%d.k8sconnect.test", time.Now().UnixNano())
	crd := fromYAML(t, fmt.Sprintf(crdTemplate, group)) // never created
	crd.Object["status"] = map[string]any{"acceptedNames": map[string]any{"plural": "gadgets", "kind": "Gadget"}}
	v1 := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}
	if _, err := c.Mapping(v1); !meta.IsNoMatchError(err) {
		t.Fatalf("before the CRD is learned: want no match, got %v", err)
	}
	c.LearnEstablished(crd)
	for _, gvk := range []schema.GroupVersionKind{v1, {Group: group, Kind: "Gadget"}} {
		m, err := c.Mapping(gvk)
		if err != nil || m.Resource != (schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}) ||
			m.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Errorf("%v after LearnEstablished: %v, %v", gvk, m, err)
		}
	}
	if !c.Discovered(v1) {
		t.Error("Discovered: false for a learned kind")
	}
	if _, err := c.Mapping(schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Gadget"}); !meta.IsNoMatchError(err) {
		t.Errorf("a version the CRD does not serve: want no match, got %v", err)
	}
	if !c.GoneWithItsKind(apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: "gadgets"}, "one"), v1) {
		t.Fatal("a 404 for a kind discovery does not list: not gone with its kind")
	}
	if _, err := c.Mapping(v1); !meta.IsNoMatchError(err) {
		t.Errorf("after discovery said the kind is gone: want no match, got %v", err)
	}
}
