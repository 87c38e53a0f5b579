package objectplan

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

func object(annotations map[string]string, managers ...string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	obj.SetAnnotations(annotations)
	var entries []metav1.ManagedFieldsEntry
	for _, m := range managers {
		entries = append(entries, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply})
	}
	obj.SetManagedFields(entries)
	return obj
}

// Who holds an object is read from its marks in one order: a Helm release
// names it first, then a k8sconnect_object's id, then whoever wrote it.
func TestHolderNamesWhoHoldsTheObject(t *testing.T) {
	release := map[string]string{AnnotationHelmReleaseName: "web", AnnotationHelmReleaseNamespace: "apps"}
	for _, tc := range []struct {
		name     string
		obj      *unstructured.Unstructured
		want     string
		byObject bool
	}{
		{"a Helm release", object(release, "helm"), "Helm release apps/web", false},
		{"a Helm release, with a k8sconnect id too", object(map[string]string{AnnotationHelmReleaseName: "web",
			AnnotationHelmReleaseNamespace: "apps", ssa.AnnotationOwnedBy: "abc"}), "Helm release apps/web", true},
		{"a k8sconnect_object", object(map[string]string{ssa.AnnotationOwnedBy: "abc"}, ssa.FieldManager),
			"the k8sconnect resource abc", true},
		{"k8sconnect's manager alone (imported, not yet applied)", object(nil, "kubectl", ssa.FieldManager),
			"no Helm release (made by kubectl, k8sconnect)", true},
		{"kubectl", object(nil, "kubectl-client-side-apply", "kube-controller-manager"),
			"no Helm release (made by kubectl-client-side-apply, kube-controller-manager)", false},
		{"nobody known", object(nil), "no Helm release (made by an unknown client)", false},
	} {
		h := HolderOf(tc.obj)
		if got := h.String(); got != tc.want {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, tc.want)
		}
		if got := h.ManagedByObject(); got != tc.byObject {
			t.Errorf("%s: ManagedByObject() = %v, want %v", tc.name, got, tc.byObject)
		}
	}
	h := HolderOf(object(release))
	if !h.InRelease("apps", "web") || h.InRelease("other", "web") || h.InRelease("apps", "api") {
		t.Errorf("InRelease does not match exactly the release apps/web: %+v", h)
	}
}
