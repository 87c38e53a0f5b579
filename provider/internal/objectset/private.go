package objectset

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

// What a set keeps per object in its private state, under privatestate.Of,
// is what k8sconnect_object keeps of its one (ADR 0004 and 0008).

// OwnedAtApply is the field set k8sconnect owned in the object key names
// after the last apply; nil when none is kept.
func OwnedAtApply(ctx context.Context, r privatestate.Reader, key string) *fieldpath.Set {
	s, err := privatestate.LoadFieldSet(ctx, privatestate.Of{R: r, Object: key}, privatestate.OwnedFields)
	if err != nil {
		return nil
	}
	return s
}

// Forget drops what is kept of an object that left the set.
func Forget(ctx context.Context, w privatestate.Writer, key string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, k := range []string{privatestate.OwnedFields, privatestate.AppliedProjection, privatestate.RevertStreaks} {
		diags.Append(privatestate.Of{W: w, Object: key}.SetKey(ctx, k, nil)...)
	}
	return diags
}
