package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"time"

	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
)

// Deleting objects of the release, as helm uninstall and upgrade delete
// them: in uninstall order, each bound to its UID and awaited until gone,
// those marked helm.sh/resource-policy: keep left in place.

// deleteRemoved deletes the objects the last apply made that the chart no
// longer renders, in Helm's uninstall order, keeping those marked
// helm.sh/resource-policy: keep.
func deleteRemoved(ctx context.Context, c *connection.Client, prior private, rd *rendered, timeout time.Duration) error {
	keep := map[string]bool{}
	for _, p := range rd.all() {
		keep[p.key] = true
	}
	var gone []manifest.Identity
	for key, o := range prior {
		if keep[key] || o.FromCRDsDir {
			continue // still in the chart, or a CRD of crds/, which helm never deletes
		}
		ident, err := identityOf(key, o)
		if err != nil {
			return err
		}
		gone = append(gone, ident)
	}
	return deleteObjects(ctx, c, gone, timeout)
}

// deleteObjects deletes objects in Helm's uninstall order and waits until
// they are gone, skipping those marked helm.sh/resource-policy: keep. The
// objects of one kind go in parallel, as applyObjects applies them.
func deleteObjects(ctx context.Context, c *connection.Client, ids []manifest.Identity, timeout time.Duration) error {
	sortUninstallOrder(ids, func(id manifest.Identity) string { return id.Kind })
	deadline := time.Now().Add(timeout)
	return objectset.KindByKind(ids, func(id manifest.Identity) string { return id.Kind }, func(id manifest.Identity) error {
		return deleteOne(ctx, c, id, deadline)
	})
}

// sortUninstallOrder sorts items kind by kind in Helm's uninstall order.
func sortUninstallOrder[T any](items []T, kind func(T) string) {
	slices.SortStableFunc(items, func(a, b T) int {
		return objectset.KindRank(relutil.UninstallOrder, kind(a)) - objectset.KindRank(relutil.UninstallOrder, kind(b))
	})
}

func deleteOne(ctx context.Context, c *connection.Client, id manifest.Identity, deadline time.Time) error {
	live, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
	if apierrors.IsNotFound(err) || c.GoneWithItsKind(err, id.GVK()) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if live.GetAnnotations()[annotationResourcePolicy] == "keep" {
		return nil
	}
	return objectset.DeleteAndWait(ctx, c, id, live, deadline)
}
