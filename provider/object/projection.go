package object

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// observe projects obj onto the fields the k8sconnect manager owns there plus
// prev (see projection.Observe); our own owned-by annotation is not shown.
// Sensitive values are rendered by red (see package sensitive).
func observe(obj *unstructured.Unstructured, prev *fieldpath.Set, ignore []objectpath.Path, red sensitive.Redactor) (projection.Observation, error) {
	return projection.ObserveRedacted(obj, ssa.FieldManager, prev, ownAnnotations, ignore, red)
}

// into writes an observation into m's computed attributes.
func into(ctx context.Context, o projection.Observation, m *model) diag.Diagnostics {
	var diags diag.Diagnostics
	proj, d := types.MapValue(types.StringType, projectionValue(o.Projection))
	diags.Append(d...)
	own, d := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, o.Ownership)
	diags.Append(d...)
	if pendingNames(o.Projection) {
		// A name that hides a value under its pending hash is not the name the
		// apply will record: the whole map is known only after apply.
		proj = types.MapUnknown(types.StringType)
	}
	if pendingNames(o.Ownership) {
		own = types.MapUnknown(types.ListType{ElemType: types.StringType})
	}
	m.ManagedStateProjection, m.FieldOwnership = proj, own
	return diags
}

// projectionValue is the managed_state_projection value of p: a sensitive leaf
// whose hash cannot be computed yet is unknown ("known after apply").
func projectionValue(p projection.Projection) map[string]attr.Value {
	out := make(map[string]attr.Value, len(p))
	for k, v := range p {
		if v == sensitive.Pending {
			out[k] = types.StringUnknown()
		} else {
			out[k] = types.StringValue(v)
		}
	}
	return out
}

// pendingNames reports whether a map names a path by a pending hash (see
// sensitive.Redactor.Name).
func pendingNames[V any](m map[string]V) bool {
	for k := range m {
		if strings.Contains(k, sensitive.Pending) {
			return true
		}
	}
	return false
}

// fullyKnown reports whether a projection map has no unknown element.
func fullyKnown(m types.Map) bool {
	if m.IsUnknown() || m.IsNull() {
		return !m.IsUnknown()
	}
	for _, e := range m.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}
