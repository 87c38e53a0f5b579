package object

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// observe projects obj onto the fields the k8sconnect manager owns there plus
// prev (see projection.Observe); our own owned-by annotation is not shown.
// Sensitive values are rendered by red (see package sensitive).
func observe(obj *unstructured.Unstructured, prev *fieldpath.Set, ignore []objectpath.Path, red sensitive.Redactor) (projection.Observation, error) {
	return projection.ObserveRedacted(obj, ssa.FieldManager, prev, []objectpath.Path{annotationPath, pendingPath}, ignore, red)
}

// into writes an observation into m's computed attributes.
func into(ctx context.Context, o projection.Observation, m *model) diag.Diagnostics {
	var diags diag.Diagnostics
	proj, d := types.MapValue(types.StringType, projectionValue(o.Projection))
	diags.Append(d...)
	own, d := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, o.Ownership)
	diags.Append(d...)
	m.ManagedStateProjection, m.FieldOwnership = proj, own
	return diags
}

// applyAndRecord applies plan's object and fills the computed attributes from
// what the server stored.
func (r *Resource) applyAndRecord(ctx context.Context, plan *model, creating bool, private privatestate.Writer, diags *diag.Diagnostics) {
	desired, ignore := desiredFromConfig(ctx, *plan, diags)
	if diags.HasError() {
		return
	}
	red := redactor(ctx, *plan, diags)
	defer red.ScrubDiagnostics(diags, desired.Object)
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return
	}
	if creating && !refuseExisting(ctx, c, desired, diags) {
		return
	}
	setOwnedBy(desired, plan.ID.ValueString())
	var applied *unstructured.Unstructured
	var err error
	if creating {
		applied, err = create(ctx, c, desired, plan.ID.ValueString())
	} else {
		applied, err = applyWithOrdering(ctx, c, desired)
	}
	if err != nil {
		diags.AddError("Apply failed", err.Error())
		return
	}
	obs, err := observe(applied, nil, ignore, red)
	if err != nil {
		diags.AddError("Apply succeeded, but its result could not be read", err.Error())
		return
	}
	planned := plan.ManagedStateProjection
	diags.Append(into(ctx, obs, plan)...)
	if fullyKnown(planned) && !planned.Equal(plan.ManagedStateProjection) {
		// The server stored something other than its dry run predicted (a
		// webhook that is not deterministic). Terraform requires the planned
		// value; the next refresh shows the difference as drift.
		tflog.Warn(ctx, "apply result differs from the dry-run prediction", map[string]any{"object": manifest.IdentityOf(desired).String()})
		plan.ManagedStateProjection = planned
	}
	ref, d := resourceref.Value(ctx, manifest.IdentityOf(desired), types.StringValue(desired.GetNamespace()), plan.ClusterConnection)
	diags.Append(d...)
	plan.ResourceRef = ref
	diags.Append(ownership.Record(ctx, private, obs)...)
}
