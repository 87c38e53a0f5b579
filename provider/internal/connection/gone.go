package connection

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
