package object

import (
	"bytes"
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// observation is what one look at an object (live, dry-run or apply result) says
// about the fields k8sconnect manages.
type observation struct {
	projection projection.Projection
	ownership  map[string][]string
	owned      *fieldpath.Set // the fields the "k8sconnect" manager owns in this object
}

// observe projects obj onto the fields we own there plus prev, the fields we
// owned after our last apply: a field another manager took from us since then is
// still shown, with its new value, so the plan shows the drift we will revert.
func observe(obj *unstructured.Unstructured, prev *fieldpath.Set, ignore []objectpath.Path) (observation, error) {
	fields, err := managedfields.Of(obj)
	if err != nil {
		return observation{}, err
	}
	owned := fields.Manager(ssa.FieldManager)
	tracked := owned
	if prev != nil {
		tracked = owned.Union(prev)
	}
	leaves := projection.Leaves(tracked, append([]objectpath.Path{annotationPath}, ignore...)...)
	// Ownership also covers ignored fields: who took them over is what users ask.
	for _, s := range fields {
		for _, l := range projection.Leaves(s) {
			if underAny(l.Path, ignore) {
				leaves = append(leaves, l)
			}
		}
	}
	return observation{
		projection: projection.Of(obj.Object, leaves),
		ownership:  projection.Ownership(fields, leaves),
		owned:      owned,
	}, nil
}

func underAny(p objectpath.Path, prefixes []objectpath.Path) bool {
	for _, x := range prefixes {
		if p.HasPrefix(x) {
			return true
		}
	}
	return false
}

// into writes the observation into m's computed attributes.
func (o observation) into(ctx context.Context, m *model) diag.Diagnostics {
	var diags diag.Diagnostics
	proj, d := types.MapValueFrom(ctx, types.StringType, map[string]string(o.projection))
	diags.Append(d...)
	own, d := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, o.ownership)
	diags.Append(d...)
	m.ManagedStateProjection, m.FieldOwnership = proj, own
	return diags
}

// applyAndRecord applies plan's object and fills the computed attributes from
// what the server stored.
func (r *Resource) applyAndRecord(ctx context.Context, plan *model, private privateState, diags *diag.Diagnostics) {
	desired, ignore := desiredFromConfig(ctx, *plan, diags)
	if diags.HasError() {
		return
	}
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return
	}
	setOwnedBy(desired, plan.ID.ValueString())
	applied, err := applyWithOrdering(ctx, c, desired)
	if err != nil {
		diags.AddError("Apply failed", err.Error())
		return
	}
	obs, err := observe(applied, nil, ignore)
	if err != nil {
		diags.AddError("Apply succeeded, but its result could not be read", err.Error())
		return
	}
	planned := plan.ManagedStateProjection
	diags.Append(obs.into(ctx, plan)...)
	if !planned.IsUnknown() && !planned.Equal(plan.ManagedStateProjection) {
		// The server stored something other than its dry run predicted (a
		// webhook that is not deterministic). Terraform requires the planned
		// value; the next refresh shows the difference as drift.
		tflog.Warn(ctx, "apply result differs from the dry-run prediction", map[string]any{"object": manifest.IdentityOf(desired).String()})
		plan.ManagedStateProjection = planned
	}
	ref, d := resourceref.Value(ctx, manifest.IdentityOf(desired), types.StringValue(desired.GetNamespace()), plan.ClusterConnection)
	diags.Append(d...)
	plan.ResourceRef = ref
	diags.Append(saveOwnedFields(ctx, private, obs.owned)...)
	diags.Append(saveJSON(ctx, private, privateAppliedProjection, obs.projection)...)
}

// Private state remembers which fields we owned after our last apply, so a
// refresh can show a field another manager has taken from us since.
const privateOwnedFields = "owned_fields"

type privateState interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

type privateReader interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

func saveOwnedFields(ctx context.Context, p privateState, s *fieldpath.Set) diag.Diagnostics {
	raw, err := s.ToJSON()
	if err != nil {
		var d diag.Diagnostics
		d.AddWarning("Could not record owned fields", err.Error())
		return d
	}
	return p.SetKey(ctx, privateOwnedFields, raw)
}

func loadOwnedFields(ctx context.Context, p privateReader) (*fieldpath.Set, error) {
	raw, diags := p.GetKey(ctx, privateOwnedFields)
	if diags.HasError() {
		return nil, fmt.Errorf("private state: %v", diags)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	s := fieldpath.NewSet()
	if err := s.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return s, nil
}
