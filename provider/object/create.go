package object

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// annotationCreatePending marks an object whose create has not finished: it is
// in no state yet. A create that finds it adopts it rather than refusing, so a
// create cut short by a lost response or a killed process converges on re-run
// with the same object (docs/adr/0001-crash-safe-create.md). Objects without it
// that carry another resource's id are never adopted.
const annotationCreatePending = "k8sconnect.io/create-pending"

var pendingPath = objectpath.Path{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationCreatePending)}

// create applies a new object in two steps: first with the pending marker, then
// without it. Only an object whose marker is gone was created by a run that
// reported success (and so is in some state).
func create(ctx context.Context, c *connection.Client, desired *unstructured.Unstructured, id string) (*unstructured.Unstructured, error) {
	pending := desired.DeepCopy()
	a := pending.GetAnnotations()
	a[annotationCreatePending] = id
	pending.SetAnnotations(a)
	if _, err := applyWithOrdering(ctx, c, pending); err != nil {
		return nil, err
	}
	applied, err := applyWithOrdering(ctx, c, desired)
	if err != nil {
		return nil, fmt.Errorf("%w\nThe object was created, but removing its %s marker was not confirmed. Run terraform "+
			"apply, tofu apply or pulumi up again: while the marker is there, the same object is picked up. If the removal did land, the re-run "+
			"says so and names the import command that takes the object over", err, annotationCreatePending)
	}
	if ns := applied.GetNamespace(); ns != "" {
		desired.SetNamespace(ns)
	}
	return applied, nil
}

// transient reports an error that says nothing about the request's fate (the
// connection broke, the server did not answer in time): a server-side apply is
// idempotent, so sending it again is safe.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
			apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
	}
	return true
}

func createPending(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[annotationCreatePending] != ""
}
