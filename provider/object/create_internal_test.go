package object

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// The create's requests set metadata on a copy that shares the rest of the
// object: the configuration's object keeps its own metadata whatever they set.
func TestMetadataCopyLeavesTheOriginalsMetadata(t *testing.T) {
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "annotations": map[string]any{annotationOwnedBy: "id"}},
		"data":     map[string]any{"k": "v"},
	}}
	c := metadataCopy(desired)
	a := c.GetAnnotations()
	a[annotationCreatePending] = "id"
	c.SetAnnotations(a)
	c.SetUID("u")
	c.SetResourceVersion(ssa.CreateOnlyVersion)
	c.SetNamespace("ns")
	if got := desired.GetAnnotations(); len(got) != 1 || got[annotationOwnedBy] != "id" {
		t.Errorf("the original's annotations became %v", got)
	}
	if desired.GetUID() != "" || desired.GetResourceVersion() != "" || desired.GetNamespace() != "" {
		t.Errorf("the original's metadata changed: %v", desired.Object["metadata"])
	}
	if c.GetName() != "a" || c.Object["data"].(map[string]any)["k"] != "v" {
		t.Errorf("the copy lost the object: %v", c.Object)
	}
}
