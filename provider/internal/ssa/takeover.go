package ssa

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// TakeOver completes an adoption after the first apply: every field
// FieldManager now owns leaves the previous tool's field managers, so it has
// one owner and a later apply that drops it deletes it. Fields only they own
// stay theirs (the configuration does not set them; nothing deletes them
// behind the user's back). It returns the object as stored after it. A
// conflict (someone wrote in between) or a cut connection is retried
// (Retry, TransientOrConflict).
func TakeOver(ctx context.Context, c *connection.Client, applied *unstructured.Unstructured, managers []string) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := Retry(ctx, TransientOrConflict, func(ctx context.Context) error {
		var err error
		out, err = takeOverOnce(ctx, c, applied, managers)
		return err
	})
	return out, err
}

func takeOverOnce(ctx context.Context, c *connection.Client, applied *unstructured.Unstructured, managers []string) (*unstructured.Unstructured, error) {
	ident := manifest.IdentityOf(applied)
	mapping, err := c.Mapping(ident.GVK())
	if err != nil {
		return nil, err
	}
	ri := c.Resource(mapping, ident.Namespace)
	live, err := ri.Get(ctx, ident.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if live.GetUID() != applied.GetUID() {
		return live, nil
	}
	fields, err := managedfields.Of(live)
	if err != nil {
		return nil, err
	}
	ours := fields.Manager(FieldManager)
	entries, total := live.GetManagedFields(), 0
	for _, m := range managers {
		if m == FieldManager {
			continue
		}
		live.SetManagedFields(entries)
		var released int
		entries, released, err = managedfields.Release(live, m, func(p fieldpath.Path) bool { return ours.Has(p) })
		if err != nil {
			return nil, err
		}
		total += released
	}
	if total == 0 {
		return live, nil
	}
	body, err := managedfields.WriteBody(entries, live.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	return ri.Patch(ctx, ident.Name, ktypes.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
}
