package ssa

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// HandOver releases FieldManager's ownership of the fields under paths
// (fields a configuration newly leaves to other managers) before the apply
// that leaves them out. Server-Side Apply deletes a field that its only
// manager stops applying; released first, the field keeps its value and
// belongs to no one until another manager (an HPA, kubectl) writes it.
//
// It acts only on the object whose UID is uid ("" for any) and reports how
// many fields it released. A conflict (someone wrote in between) or a cut
// connection is retried (Retry, TransientOrConflict). A missing object is no
// error: the apply that follows says what happened.
func HandOver(ctx context.Context, c *connection.Client, ident manifest.Identity, uid string, paths []objectpath.Path) (int, error) {
	if len(paths) == 0 {
		return 0, nil
	}
	var released int
	err := Retry(ctx, TransientOrConflict, func(ctx context.Context) error {
		var err error
		released, err = handOverOnce(ctx, c, ident, uid, paths)
		return err
	})
	return released, err
}

func handOverOnce(ctx context.Context, c *connection.Client, ident manifest.Identity, uid string, paths []objectpath.Path) (int, error) {
	mapping, err := c.Mapping(ident.GVK())
	if err != nil {
		return 0, err
	}
	ri := c.Resource(mapping, ident.Namespace)
	live, err := ri.Get(ctx, ident.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if uid != "" && string(live.GetUID()) != uid {
		return 0, nil
	}
	entries, released, err := managedfields.Release(live, FieldManager, func(fp fieldpath.Path) bool {
		return objectpath.FromFieldPath(fp).UnderAny(paths)
	})
	if err != nil || released == 0 {
		return 0, err
	}
	body, err := managedfields.WriteBody(entries, live.GetResourceVersion())
	if err != nil {
		return 0, err
	}
	_, err = ri.Patch(ctx, ident.Name, ktypes.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	return released, err
}
