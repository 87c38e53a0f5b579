package connection

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Gone reports a 404 that says the object named name does not exist: the API
// server's own Status, which names the object. Anything else that answers
// 404 is no verdict on the object: an ingress or a load balancer in front of
// the API server that has no route (its HTML page), a path the server does
// not serve. client-go dresses such a page as a NotFound of the object it
// asked for, but marks it as an unexpected answer, which is how it is told
// apart. A refresh that dropped the object from state on such an answer
// would create it again, in a cluster that still holds it.
func Gone(err error, name string) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	if d == nil || d.Name != name {
		return false
	}
	for _, c := range d.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return false
		}
	}
	return true
}

// NoVerdictNotFound is a 404 about an object that is not the API server's
// word that the object is gone: its answer names no such object (an HTML page
// from an ingress or a load balancer in front of the server, a path the
// server does not route) while discovery says the kind is served. It is not
// a NotFound (apierrors.IsNotFound is false), so no caller reads it as
// "deleted" or "gone".
type NoVerdictNotFound struct {
	// Object names the object asked about ("v1/ConfigMap ns/name").
	Object string
	Err    error
}

func (e *NoVerdictNotFound) Error() string {
	return fmt.Sprintf("the API server's address answered 404 about %s, but not as the API server does (its answer "+
		"names no such object, and the cluster still serves the kind): %v", e.Object, e.Err)
}

// NotFoundVerdict is err as a verdict on the object gvk/name: a 404 stays a
// NotFound only when the server's Status names the object (Gone) or the
// object's kind is gone with it (GoneWithItsKind); any other 404 becomes a
// NoVerdictNotFound. Other errors pass as they are.
func (c *Client) NotFoundVerdict(err error, gvk schema.GroupVersionKind, object, name string) error {
	if !apierrors.IsNotFound(err) || Gone(err, name) || c.GoneWithItsKind(err, gvk) {
		return err
	}
	return &NoVerdictNotFound{Object: object, Err: err}
}

// NoVerdict reports a NoVerdictNotFound: a 404 that says nothing about the
// object, which sent again is answered the same.
func NoVerdict(err error) bool {
	var nv *NoVerdictNotFound
	return errors.As(err, &nv)
}
