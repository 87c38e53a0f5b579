// Package ssa applies objects with Server-Side Apply, the one write path every
// k8sconnect resource uses, so field ownership is always recorded by the server.
package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
)

// FieldManager is the manager name k8sconnect_object applies under.
const FieldManager = "k8sconnect"

// AnnotationOwnedBy carries a k8sconnect_object's resource id on its object, so
// a second configuration cannot silently adopt it and k8sconnect_patch can
// refuse to patch it.
// CreateOnlyVersion is a resourceVersion no stored object can have. Sent with
// a Server-Side Apply it makes the apply a create-only request: the server
// creates the object when it is absent and answers 409 Conflict when any object
// of that name exists, in one atomic step. Two writers that mean to create the
// same object therefore cannot both create it, whatever the timing.
const CreateOnlyVersion = "18446744073709551615"

const AnnotationOwnedBy = "k8sconnect.io/owned-by"

// Options control one apply.
type Options struct {
	FieldManager string
	// DryRun asks the server to run admission, defaulting and validation and to
	// return the object it would store, without storing it.
	DryRun bool
}

// unknownOutcomeResends is how often Apply sends again an apply whose answer
// the network lost after it was sent.
const unknownOutcomeResends = 2

// outcomeUnknown reports a write that was sent and whose answer the network
// lost; not one the connection did not send at all (its link answered
// nothing for a whole budget).
func outcomeUnknown(err error) bool {
	var ne *connection.NetworkError
	return errors.As(err, &ne) && ne.Write && ne.Attempts > 0
}

// Apply server-side applies obj with force: the configuration is the user's
// declared intent, and conflicts are explained at plan time instead of failing
// the apply (ADR 0008). Field validation is strict, so an unknown or mistyped
// field is an error rather than silently dropped. A namespaced object without a
// namespace goes to "default", as kubectl does; the namespace is written into
// obj so callers record it.
func Apply(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured, opts Options) (*unstructured.Unstructured, error) {
	mapping, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := defaultNamespace(obj, mapping); err != nil {
		return nil, err
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	force := true
	patchOpts := metav1.PatchOptions{FieldManager: opts.FieldManager, Force: &force, FieldValidation: "Strict"}
	ns := obj.GetNamespace()
	if opts.DryRun {
		if c.NamespaceMissing(ns) {
			// Answered as the server answers it, without its 50 ms wait
			// (connection.NamespaceMissing).
			return nil, connection.NamespaceNotFound(ns)
		}
		patchOpts.DryRun = []string{metav1.DryRunAll}
	}
	out, err := c.Resource(mapping, ns).Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body, patchOpts)
	for resent := 0; !opts.DryRun && outcomeUnknown(err) && resent < unknownOutcomeResends; resent++ {
		// The same body by the same manager, forced: an apply sent twice
		// is the same as once (ADR 0012 point 5), so an answer the network
		// lost is settled by sending it again, for every caller alike.
		out, err = c.Resource(mapping, ns).Patch(ctx, obj.GetName(), ktypes.ApplyPatchType, body, patchOpts)
	}
	c.NoteNamespace(ns, err)
	if err == nil && !opts.DryRun && mapping.GroupVersionKind.GroupKind() == namespaceKind {
		c.NoteNamespace(obj.GetName(), nil) // made, or there already
	}
	return out, err
}

var namespaceKind = schema.GroupKind{Kind: "Namespace"}

// defaultNamespace fills or rejects metadata.namespace according to the kind's scope.
func defaultNamespace(obj *unstructured.Unstructured, mapping *meta.RESTMapping) error {
	if !scope.Namespaced(mapping) && obj.GetNamespace() != "" {
		return fmt.Errorf("%s is cluster-scoped, but the manifest sets metadata.namespace %q; remove it", obj.GetKind(), obj.GetNamespace())
	}
	obj.SetNamespace(scope.Namespace(mapping, obj.GetNamespace()))
	return nil
}
