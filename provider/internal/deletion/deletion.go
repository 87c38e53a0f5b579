// Package deletion deletes one object bound to its UID and waits until it is
// gone: what k8sconnect_object's destroy and k8sconnect_helm_release's
// removal of an object (left the chart, or uninstalled) have in common. An
// object of the same name with another UID counts as gone: it is not the one
// deleted, and is never touched.
package deletion

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
)

// Delete sends the delete of id with background propagation, bound to uid
// and, when rv is not "", to that resourceVersion: the server refuses it
// (409) when the object was replaced or, with rv, changed since it was read.
//
// What the answer says is judged here, for every caller alike: a 404 is a
// NotFound (done) only when it is the server's word on this object, and
// otherwise a connection.NoVerdictNotFound (nothing was deleted); a delete
// whose answer the network lost (its outcome unknown) is settled by reading
// the object: gone, or another object by that name, is done.
func Delete(ctx context.Context, c *connection.Client, id manifest.Identity, uid ktypes.UID, rv string) error {
	mapping, err := c.Mapping(id.GVK())
	if err != nil {
		return err
	}
	propagation := metav1.DeletePropagationBackground
	pre := &metav1.Preconditions{UID: &uid}
	if rv != "" {
		pre.ResourceVersion = &rv
	}
	err = c.Resource(mapping, id.Namespace).Delete(ctx, id.Name, metav1.DeleteOptions{PropagationPolicy: &propagation, Preconditions: pre})
	if connection.IsNetworkFailure(err) && !connection.Exhausted(err) {
		// The delete may have landed: a read says.
		live, gerr := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		if connection.Gone(gerr, id.Name) || (gerr == nil && live.GetUID() != uid) {
			return nil
		}
	}
	return c.NotFoundVerdict(err, id.GVK(), id.String(), id.Name)
}

// Replaced reports a delete refused (409) because the object it was bound to
// is no longer there: a read finds none by that name, or another (a new
// UID). A 409 with the same object still there is a refusal the caller must
// report or send again, not a delete done.
func Replaced(ctx context.Context, c *connection.Client, id manifest.Identity, uid ktypes.UID, err error) bool {
	if !apierrors.IsConflict(err) {
		return false
	}
	live, gerr := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
	return connection.Gone(gerr, id.Name) || (gerr == nil && live.GetUID() != uid)
}

// WaitGone polls until the object with uid is gone. Polls read metadata
// alone, five times a second, and anything but an answer (a dropped
// connection, the client's rate limiter near the deadline) is transient:
// the wait goes on until the timeout. When the timeout passes, the object is
// read whole once and returned with the error, for what holds it
// (finalizers, a namespace's conditions); nil when it was never seen. When
// the operation's deadline (optimeout) ends the wait, no request outlives
// it: the metadata of the last poll is returned instead.
func WaitGone(ctx context.Context, c *connection.Client, id manifest.Identity, uid ktypes.UID, timeout time.Duration) (*unstructured.Unstructured, error) {
	gone := func(obj *unstructured.Unstructured, err error) bool {
		return apierrors.IsNotFound(err) || (err == nil && obj.GetUID() != uid)
	}
	var polled *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		if err == nil {
			polled = obj
		}
		return gone(obj, err), nil
	})
	if err == nil || polled == nil {
		return nil, err
	}
	if e := optimeout.Ran(ctx); e != nil {
		return polled, e
	}
	last, gerr := c.Get(ctx, id.GVK(), id.Namespace, id.Name)
	if gone(last, gerr) {
		return nil, nil // gone since the last poll
	}
	if gerr != nil {
		return nil, err
	}
	return last, err
}

// Holding is what the API server's own status of last, an object still
// being deleted, says holds it: a Namespace's content or finalizers
// remaining, or a CustomResourceDefinition whose custom resources the
// server is deleting or failed to delete ("InstanceDeletionFailed: could
// not list instances: ..."). Nil for other kinds, and when the status
// says nothing.
func Holding(last *unstructured.Unstructured) []string {
	var types map[string]bool
	switch last.GroupVersionKind().GroupKind() {
	case namespaceKind:
		types = map[string]bool{"NamespaceContentRemaining": true, "NamespaceFinalizersRemaining": true}
	case crdKind:
		types = map[string]bool{"Terminating": true}
	default:
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(last.Object, "status", "conditions")
	var out []string
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["status"] != "True" || !types[fmt.Sprint(m["type"])] {
			continue
		}
		if last.GetKind() == crdKind.Kind {
			out = append(out, fmt.Sprintf("%v: %v", m["reason"], m["message"]))
		} else {
			out = append(out, fmt.Sprint(m["message"]))
		}
	}
	return out
}

var (
	namespaceKind = schema.GroupKind{Kind: "Namespace"}
	crdKind       = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)
