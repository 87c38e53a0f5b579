package manifestset_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

// A set's CRD that a custom resource made outside the set holds (a
// controller's finalizer that never runs): destroy fails within the set's
// timeout, naming the CRD, its finalizer and what the API server says holds
// it, and the set stays in state. With the custom resource's finalizer
// gone, the next destroy finishes.
func TestAccManifestSet_destroyNamesWhatHoldsACRD(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	group := strings.ToLower(acctest.Name("held")) + ".k8sconnect.test"
	crd := fixtures.CRD(group, "Gadget", "size: {type: integer}")
	const address = "k8sconnect_manifest_set.held"
	w := acctest.NewWorkdir(t)
	w.Write(setConfig(t, "held", yamlBody(crd), `timeout = "8s"`))
	w.Cleanup()
	w.MustApply()

	gadgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	gadget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "kept", "namespace": ns, "finalizers": []any{"k8sconnect.test/block"}},
		"spec":     map[string]any{"size": int64(1)},
	}}
	ctx := context.Background()
	if _, err := acctest.Dynamic(t).Resource(gadgets).Namespace(ns).Create(ctx, gadget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	release := func() {
		_, _ = acctest.Dynamic(t).Resource(gadgets).Namespace(ns).Patch(ctx, "kept", "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
	t.Cleanup(release)

	r := w.Destroy()
	w.MustFail(r, "destroy of a set whose CRD a custom resource holds")
	for _, want := range []string{
		"CustomResourceDefinition gadgets." + group,  // the CRD, by its identity
		"customresourcecleanup.apiextensions.k8s.io", // its finalizer
		"the API server says: InstanceDeletion",      // the Terminating condition's reason
	} {
		if !strings.Contains(strings.ToLower(r.Output), strings.ToLower(want)) {
			t.Errorf("the error should name %q:\n%.3000s", want, r.Output)
		}
	}
	if id := w.StateAttribute(address, "id"); id == "" {
		t.Error("the set left state though its CRD was not deleted")
	}

	release()
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy once the custom resource let go: %v\n%.3000s", r.Err, r.Output)
	}
	acctest.MustNotExist(t, crds, "", "gadgets."+group)
	acctest.MustNotExist(t, gadgets, ns, "kept")
}
