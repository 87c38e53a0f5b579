package object

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// orderingTimeout is how long an apply waits for a kind (a CRD created in the
// same run) or a namespace to appear, so users need no depends_on for them.
const orderingTimeout = 30 * time.Second

// applyWithOrdering applies obj, waiting with backoff for a kind or namespace
// that another resource in the same run is still creating.
func applyWithOrdering(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var applied *unstructured.Unstructured
	err := retry(ctx, func(err error) bool { return waitsForOrdering(err) || transient(err) }, func(ctx context.Context) error {
		var err error
		applied, err = ssa.Apply(ctx, c, metadataCopy(obj), ssa.Options{FieldManager: ssa.FieldManager})
		return err
	})
	lastErr := err
	if err == nil {
		if applied.GetNamespace() != "" {
			obj.SetNamespace(applied.GetNamespace())
		}
		return applied, nil
	}
	id := manifest.IdentityOf(obj)
	switch {
	case meta.IsNoMatchError(lastErr):
		return nil, fmt.Errorf("the cluster does not serve %s (apiVersion %s) after waiting %s. If a CRD defines it, "+
			"check the CRD's group, version and served flag; if the CRD is created in this run by a tool other "+
			"than k8sconnect, add depends_on", id.Kind, id.APIVersion, orderingTimeout)
	case apierrors.IsNotFound(lastErr):
		return nil, fmt.Errorf("namespace %q does not exist after waiting %s: create it (for example with another "+
			"k8sconnect_object) or fix metadata.namespace: %v", obj.GetNamespace(), orderingTimeout, lastErr)
	}
	return nil, fmt.Errorf("server-side apply of %s failed: %w", id, lastErr)
}

// retry calls f until it succeeds, fails in a way retryable rejects, or
// orderingTimeout has passed, backing off from 250ms to at most 4s between
// calls. It returns f's last error. (wait.ExponentialBackoff stops as soon as
// its cap is reached, long before the timeout; hence this loop.)
func retry(ctx context.Context, retryable func(error) bool, f func(context.Context) error) error {
	deadline := time.Now().Add(orderingTimeout)
	delay := 250 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || !retryable(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(time.Duration(float64(delay)*1.6), 4*time.Second)
	}
}

// waitsForOrdering: the kind is not served yet, or the namespace does not exist
// yet (an apply never returns NotFound for the object itself).
func waitsForOrdering(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// transient reports an error that says nothing about the request's fate (the
// connection broke, the server did not answer in time, or failed): a
// server-side apply is idempotent, so sending it again is safe. A 429 or 503
// is not: the transport has already sent it again for its budget (without
// Retry-After), or client-go as often as Retry-After asked (ADR 0014 point 7),
// so retrying here too made a persistent 503 fail after 50 s instead of 20.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err)
	}
	return true
}
