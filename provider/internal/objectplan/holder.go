package objectplan

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// The annotations Helm writes on every object of a release, naming it.
const (
	AnnotationHelmReleaseName      = "meta.helm.sh/release-name"
	AnnotationHelmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// LabelApplySetPartOf is the label every member of an ApplySet (KEP-3659)
// carries, naming the set.
const LabelApplySetPartOf = "applyset.kubernetes.io/part-of"

// Holder is who holds a live object, as the marks on it say: the
// k8sconnect_object whose id it carries, the Helm release its annotations
// name, and the field managers that wrote it.
type Holder struct {
	// Resource is the id in k8sconnect_object's owned-by annotation.
	Resource string
	// ReleaseName and ReleaseNamespace name the Helm release it belongs to.
	ReleaseName, ReleaseNamespace string
	// ApplySet is the id of the ApplySet it is a member of (its part-of
	// label): a k8sconnect_manifest_set's, or kubectl apply --applyset's.
	ApplySet string
	// Managers are its field managers, in the order the server lists them.
	Managers []string
}

// HolderOf reads who holds obj.
func HolderOf(obj metav1.Object) Holder {
	ann := obj.GetAnnotations()
	h := Holder{Resource: ann[ssa.AnnotationOwnedBy], ReleaseName: ann[AnnotationHelmReleaseName],
		ReleaseNamespace: ann[AnnotationHelmReleaseNamespace], ApplySet: obj.GetLabels()[LabelApplySetPartOf]}
	for _, e := range obj.GetManagedFields() {
		h.Managers = append(h.Managers, e.Manager)
	}
	return h
}

// ManagedByObject reports an object a k8sconnect_object manages: it carries
// one's id, or k8sconnect's field manager holds fields of it (an object
// imported and not yet applied carries no id) and no set claims it.
func (h Holder) ManagedByObject() bool {
	return h.Resource != "" || (h.ApplySet == "" && h.ReleaseName == "" && slices.Contains(h.Managers, ssa.FieldManager))
}

// InRelease reports whether the object belongs to the Helm release
// namespace/name.
func (h Holder) InRelease(namespace, name string) bool {
	return h.ReleaseName == name && h.ReleaseNamespace == namespace
}

// String names the holder for a message: the Helm release, else the
// k8sconnect resource, else the ApplySet, else the field managers that made
// it.
func (h Holder) String() string {
	switch {
	case h.ReleaseName != "":
		return fmt.Sprintf("Helm release %s/%s", h.ReleaseNamespace, h.ReleaseName)
	case h.Resource != "":
		return fmt.Sprintf("the k8sconnect resource %s", h.Resource)
	case h.ApplySet != "":
		return fmt.Sprintf("the ApplySet %s (a k8sconnect_manifest_set, or kubectl apply --applyset)", h.ApplySet)
	}
	return "no Helm release (made by " + h.MadeBy() + ")"
}

// Unclaimed reports an object that carries no marks of a release, a
// k8sconnect resource or a set.
func (h Holder) Unclaimed() bool {
	return h.ReleaseName == "" && h.Resource == "" && h.ApplySet == ""
}

// MadeBy names the field managers that wrote the object.
func (h Holder) MadeBy() string {
	if len(h.Managers) == 0 {
		return "an unknown client"
	}
	return strings.Join(h.Managers, ", ")
}
