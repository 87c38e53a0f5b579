package object

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// orderingTimeout is how long an apply waits for a kind (a CRD created in the
// same run) or a namespace to appear, so users need no depends_on for them.
const orderingTimeout = ssa.RetryWindow

// applyWithOrdering applies obj, waiting with backoff for a kind or namespace
// that another resource in the same run is still creating.
func applyWithOrdering(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var applied *unstructured.Unstructured
	err := ssa.Retry(ctx, func(err error) bool { return waitsForOrdering(err, obj.GetNamespace()) || ssa.Transient(err) }, func(ctx context.Context) error {
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
	case namespaceMissing(lastErr, obj.GetNamespace()):
		return nil, fmt.Errorf("namespace %q does not exist after waiting %s: create it (for example with another "+
			"k8sconnect_object) or fix metadata.namespace: %v", obj.GetNamespace(), orderingTimeout, lastErr)
	}
	return nil, fmt.Errorf("server-side apply of %s failed: %w", id, lastErr)
}

// waitsForOrdering: the kind is not served yet, or namespace does not exist
// yet (an apply never returns NotFound for the object itself).
// Only the server's NotFound that names the namespace says the latter: a 404
// from something in front of the server (an ingress's HTML page) is no
// verdict, and taken for a namespace this run creates it let a plan go
// through with every value unknown.
func waitsForOrdering(err error, namespace string) bool {
	return meta.IsNoMatchError(err) || namespaceMissing(err, namespace)
}

// namespaceMissing reports the API server's NotFound of namespace ns, and not
// a page in its place that client-go dressed as one (Gone).
func namespaceMissing(err error, ns string) bool {
	return ns != "" && connection.IsNamespaceNotFound(err, ns) && connection.Gone(err, ns)
}
