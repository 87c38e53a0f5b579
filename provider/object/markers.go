package object

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// annotationOwnedBy carries the id of the k8sconnect_object resource that
// created an object: what a plan, an update and a delete check before they
// touch it, so that two resources, or two states, never share one object.
const annotationOwnedBy = ssa.AnnotationOwnedBy

var annotationPath = objectpath.Path{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationOwnedBy)}

// setOwnedBy marks obj as the object of the resource with this id.
func setOwnedBy(obj *unstructured.Unstructured, id string) { setAnnotation(obj, annotationOwnedBy, id) }

// setAnnotation sets one of k8sconnect's markers on obj.
func setAnnotation(obj *unstructured.Unstructured, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}

// newID is a new resource's id: random, so that two states declaring the same
// object carry different ids and the second is refused.
func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// ownAnnotations are k8sconnect's own markers on an object, never projected.
var ownAnnotations = []objectpath.Path{annotationPath, pendingPath, runPath}

// notOurs explains an update or delete refused because the object in the
// cluster is not the one this resource created, or "" when it is.
func notOurs(live *unstructured.Unstructured, id, uid string) string {
	ident := manifest.IdentityOf(live)
	owner := objectplan.HolderOf(live).Resource
	var found []string
	if uid != "" && string(live.GetUID()) != uid {
		found = append(found, fmt.Sprintf("its UID is %s, not %s: the object this resource created was deleted and "+
			"this one was created in its place", live.GetUID(), uid))
	}
	// No annotation at all is still ours when the UID matches: an imported
	// object gets it on its first apply.
	if owner != "" && owner != id {
		found = append(found, fmt.Sprintf("it carries the id %s of another k8sconnect resource, not this resource's %s "+
			"(annotation %s)", owner, id, annotationOwnedBy))
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("%s in the cluster is not the object this resource manages: %s.", ident, strings.Join(found, "; and "))
}
