package objectset

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/deletion"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// WaitEstablished waits until a CRD's kind is served.
func WaitEstablished(ctx context.Context, c *connection.Client, crd *unstructured.Unstructured, timeout time.Duration) error {
	m, err := c.Mapping(crd.GroupVersionKind())
	if err != nil {
		return err
	}
	eval := func(obj *unstructured.Unstructured) waiting.State {
		return waiting.Spec{Condition: "Established"}.Evaluate(obj)
	}
	_, err = waiting.Until(ctx, c.Resource(m, ""), crd.GetName(), eval, waiting.Options{Timeout: timeout})
	return err
}

// DeleteAndWait deletes the object read as live, bound to its UID, and waits
// until it is gone or deadline passes.
func DeleteAndWait(ctx context.Context, c *connection.Client, id manifest.Identity, live *unstructured.Unstructured, deadline time.Time) error {
	uid := live.GetUID()
	err := deletion.Delete(ctx, c, id, uid, "")
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or already replaced by another
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", id, err)
	}
	last, err := deletion.WaitGone(ctx, c, id, uid, max(time.Until(deadline), time.Millisecond))
	switch {
	case err == nil:
		return nil
	case last != nil && errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s is still being deleted (finalizers: %v); it will be deleted when they are done", id, last.GetFinalizers())
	}
	return fmt.Errorf("waiting for %s to be deleted: %w", id, err)
}
