package object

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// applyAndRecord applies the configuration's object and fills the computed attributes from
// what the server stored. prior is the state before an update, nil on create.
func (r *Resource) applyAndRecord(ctx context.Context, config tfsdk.Config, plan, prior *model, private privatestate.ReadWriter, diags *diag.Diagnostics) {
	// Every apply sends the whole body, yaml_body_wo's too: Server-Side
	// Apply drops a field that its only manager leaves out.
	desired, ignore := desiredFromConfig(ctx, withWriteOnly(ctx, *plan, config, diags), diags)
	if diags.HasError() {
		return
	}
	red := redactor(ctx, *plan, diags)
	defer red.ScrubDiagnostics(diags, desired.Object)
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return
	}
	ident := manifest.IdentityOf(desired)
	recorded := ""
	if prior != nil {
		recorded = prior.ClusterUID.ValueString()
	}
	// The plan compared every identity recorded; the apply checks the one in
	// state, and keeps all it sees now for later plans (connection.Record).
	cluster, err := c.CheckCluster(ctx, connection.Recorded{Identity: recorded}, ident.String(), ident.Namespace)
	if err != nil {
		diags.AddError("Cannot confirm which cluster this is", fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return
	}
	diags.Append(connection.Record(ctx, private, cluster)...)
	setOwnedBy(desired, plan.ID.ValueString())
	forget(c, ident)
	var applied *unstructured.Unstructured
	// An update whose plan found no object (deleted outside k8sconnect, and
	// the engine did not refresh) creates it again, with the same checks as
	// any create.
	if prior == nil || plan.UID.IsUnknown() {
		applied, err = create(ctx, c, desired, plan.ID.ValueString())
	} else {
		if err := handOver(ctx, c, desired, prior.UID.ValueString(), newlyIgnored(ctx, prior, plan)); err != nil {
			diags.AddError("Could not hand over the newly ignored fields", err.Error())
			return
		}
		desired.SetUID(ktypes.UID(prior.UID.ValueString()))
		applied, err = applyWithOrdering(ctx, c, desired)
		err = explainUIDMismatch(err, ident, prior.UID.ValueString())
	}
	var claimed *claimedError
	switch {
	case errors.As(err, &claimed):
		diags.AddAttributeError(pathYAMLBody, "Object already exists", err.Error())
		return
	case connection.IsNetworkFailure(err):
		diags.AddError(connection.NoAnswer+": apply not confirmed", fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return
	case err != nil:
		detail := err.Error()
		if remedy := connection.Remedy(err); remedy != "" {
			detail += "\n\n" + remedy
		}
		diags.AddError("Apply failed", detail)
		return
	}
	if mv, moving := pendingMove(ctx, private); moving {
		// An object re-created after the move (it was deleted meanwhile)
		// has no old manager to hand over from.
		if prior != nil && !plan.UID.IsUnknown() {
			if applied, err = ssa.TakeOver(ctx, c, applied, mv.Managers); err != nil {
				diags.AddError("Applied, but the fields of the provider it was moved from were not handed over",
					fmt.Sprintf("%s: %v. The next apply tries again.", ident, err))
				return
			}
		}
		diags.Append(private.SetKey(ctx, privateMovedFrom, nil)...)
	}
	obs, err := observe(applied, nil, ignore, red)
	if err != nil {
		diags.AddError("Apply succeeded, but its result could not be read", err.Error())
		return
	}
	planned, plannedOwners := plan.ManagedStateProjection, plan.FieldOwnership
	diags.Append(into(ctx, obs, plan)...)
	stored := obs.Projection
	if fullyKnown(planned) && !planned.Equal(plan.ManagedStateProjection) {
		// The server stored something other than its dry run predicted (a
		// webhook that is not deterministic). Terraform requires the planned
		// value; the next refresh shows the difference as drift.
		tflog.Warn(ctx, "apply result differs from the dry-run prediction", map[string]any{"object": ident.String()})
		plan.ManagedStateProjection = planned
		stored = ownership.StateProjection(ctx, planned)
	}
	if !plannedOwners.IsUnknown() && !plannedOwners.IsNull() && !plannedOwners.Equal(plan.FieldOwnership) {
		// Another manager took or shared a field between the plan's dry run
		// and the apply: Terraform requires the planned owners, and the next
		// refresh reads the new ones.
		tflog.Warn(ctx, "field owners after apply differ from the plan's", map[string]any{"object": ident.String()})
		plan.FieldOwnership = plannedOwners
	}
	plan.UID = types.StringValue(string(applied.GetUID()))
	if plan.ClusterUID.IsUnknown() || plan.ClusterUID.IsNull() {
		plan.ClusterUID = types.StringValue(cluster.Identity)
	}
	ref, d := resourceref.Value(ctx, manifest.IdentityOf(desired), types.StringValue(desired.GetNamespace()), plan.ClusterConnection)
	diags.Append(d...)
	plan.ResourceRef = ref
	diags.Append(ownership.Record(ctx, private, obs, stored)...)
}

// readOwnership completes an update in which only the connection changed,
// without a write, and reports whether it did. field_ownership is left unknown
// by a plan whose refresh was skipped (the stored credentials were refused),
// or that found the live object drifted from state (Pulumi plans without a
// refresh): the object is read with the new connection, one GET, and if our
// fields drifted the caller applies after all, to set them back.
func (r *Resource) readOwnership(ctx context.Context, plan *model, prev privatestate.Reader, private privatestate.Writer, diags *diag.Diagnostics) bool {
	if !plan.FieldOwnership.IsUnknown() {
		return true
	}
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return true // the error is in diags
	}
	ref, d := resourceref.FromObject(ctx, plan.ResourceRef)
	diags.Append(d...)
	live, err := get(ctx, c, ref.Identity())
	if err != nil || live == nil || string(live.GetUID()) != plan.UID.ValueString() {
		return false // gone or replaced: the apply explains it
	}
	ignore, _ := ignorePaths(ctx, plan.IgnoreFields, diags)
	obs, differs, err := ownership.LiveDiffers(ctx, prev, live, ssa.FieldManager, ownAnnotations, ignore,
		ownership.StateProjection(ctx, plan.ManagedStateProjection), redactor(ctx, *plan, diags))
	if err != nil || differs {
		return false // drifted since our last apply: set it back
	}
	own, d := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, obs.Ownership)
	diags.Append(d...)
	plan.FieldOwnership = own
	markRefreshSkipped(ctx, private, false)
	return true
}

// explainUIDMismatch turns the server's answer to an update bound to a UID
// into what happened to the object.
func explainUIDMismatch(err error, ident manifest.Identity, uid string) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err) && strings.Contains(err.Error(), "no existing object was found"):
		return fmt.Errorf("%s (UID %s) was deleted after the plan was made, so nothing was applied. Run the plan "+
			"again: it proposes to create the object anew", ident, uid)
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "metadata.uid"):
		return fmt.Errorf("%s in the cluster is no longer the object this resource created (UID %s): it was "+
			"deleted and re-created by someone else after the plan was made. Nothing was applied; the next refresh "+
			"removes this resource from state and leaves the other object alone", ident, uid)
	}
	return err
}

// newlyIgnored lists the ignore_fields entries an update adds.
func newlyIgnored(ctx context.Context, prior, plan *model) []objectpath.Path {
	var diags diag.Diagnostics
	before, _ := ignorePaths(ctx, prior.IgnoreFields, &diags)
	after, _ := ignorePaths(ctx, plan.IgnoreFields, &diags)
	seen := map[string]bool{}
	for _, p := range before {
		seen[p.String()] = true
	}
	var out []objectpath.Path
	for _, p := range after {
		if !seen[p.String()] {
			out = append(out, p)
		}
	}
	return out
}

// handOver releases our ownership of fields newly listed in ignore_fields
// before the apply that leaves them out (ssa.HandOver).
func handOver(ctx context.Context, c *connection.Client, desired *unstructured.Unstructured, uid string, paths []objectpath.Path) error {
	ident := manifest.IdentityOf(desired)
	released, err := ssa.HandOver(ctx, c, ident, uid, paths)
	if released > 0 && err == nil {
		tflog.Info(ctx, "handing over newly ignored fields", map[string]any{"object": ident.String(), "fields": released})
	}
	return err
}

// leftObject is what an apply of the object that failed leaves as it is.
const leftObject = "What was sent before it stays as it is; the next apply picks up from there."

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.phase.Applying()
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Create)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftObject)
	if plan.ID.IsUnknown() {
		plan.ID = types.StringValue(newID())
	}
	r.applyAndRecord(ctx, req.Config, &plan, nil, resp.Private, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.phase.Applying()
	var plan, prior model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Update)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftObject)
	if _, moving := pendingMove(ctx, req.Private); moving || !onlyConnectionChanged(ctx, plan, prior) || !r.readOwnership(ctx, &plan, req.Private, resp.Private, &resp.Diagnostics) {
		r.applyAndRecord(ctx, req.Config, &plan, &prior, resp.Private, &resp.Diagnostics)
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}
