package helmrelease

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// entry is one managedFields entry of manager owning fieldsV1.
func entry(manager, op, fieldsV1 string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op),
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fieldsV1)}
}

// Whoever installed an object of a Helm release owns its release marks,
// whatever the tool calls itself; a controller that only writes what it
// manages (an HPA's replicas, a status) and k8sconnect itself are no
// installers.
func TestInstallersAreTheOwnersOfTheReleaseMarks(t *testing.T) {
	marks := `{"f:metadata":{"f:annotations":{"f:meta.helm.sh/release-name":{},"f:meta.helm.sh/release-namespace":{}},` +
		`"f:labels":{"f:app.kubernetes.io/managed-by":{}}},"f:data":{"f:greeting":{}}}`
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		entry("helm-controller", "Update", marks),            // Flux
		entry("zarf", "Apply", marks),                        // Zarf
		entry("pulumi-resource-kubernetes", "Update", marks), // pulumi-kubernetes' helm.v3.Release
		entry("k8sconnect", "Apply", marks),
		entry("horizontal-pod-autoscaler", "Update", `{"f:spec":{"f:replicas":{}}}`),
		entry("helm", "Update", `{"f:data":{"f:other":{}}}`), // Helm's own name, marks or not
		entry("kubectl-edit", "Update", `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
	})
	got := installers(obj)
	want := []string{"helm-controller", "zarf", "pulumi-resource-kubernetes", "helm"}
	if !slices.Equal(got, want) {
		t.Errorf("installers = %v, want %v", got, want)
	}
}
