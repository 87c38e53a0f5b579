package patch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

// leftPatch is what an apply of the patch that failed leaves as it is.
const leftPatch = "The target stays as it is; the next apply sends the patch again."

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
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftPatch)
	plan = withWriteOnly(ctx, plan, req.Config, &resp.Diagnostics)
	if r.apply(ctx, &plan, "", resp.Private, &resp.Diagnostics) {
		withoutWriteOnly(&plan)
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
	defer optimeout.Finish(ctx, &resp.Diagnostics, leftPatch)
	// Every apply sends the whole patch, patch_wo's too: Server-Side Apply
	// drops a field that its only manager leaves out.
	plan = withWriteOnly(ctx, plan, req.Config, &resp.Diagnostics)
	if r.apply(ctx, &plan, prior.ClusterUID.ValueString(), resp.Private, &resp.Diagnostics) {
		withoutWriteOnly(&plan)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// apply sends the patch and records what the server stored. recordedCluster
// is the cluster an update's patch was made in ("" on create).
func (r *Resource) apply(ctx context.Context, plan *model, recordedCluster string, private privatestate.Writer, diags *diag.Diagnostics) bool {
	target, ok := targetOf(ctx, plan.Target)
	if !ok {
		diags.AddAttributeError(path.Root("target"), "Unknown target", "target is not known at apply time.")
		return false
	}
	ct, err := parseContent(*plan)
	if err != nil {
		diags.AddAttributeError(contentPath(*plan), "Invalid patch", err.Error())
		return false
	}
	if plan.ID.IsUnknown() {
		plan.ID = types.StringValue(idFor(target, ct))
	}
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return false
	}
	// The plan compared every identity recorded; the apply checks the one in
	// state, and keeps all it sees now for later plans (connection.Record).
	cluster, err := c.CheckCluster(ctx, connection.Recorded{Identity: recordedCluster}, target.String(), target.Namespace)
	if err != nil {
		diags.AddError("Cannot confirm which cluster this is",
			fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return false
	}
	diags.Append(connection.Record(ctx, private, cluster)...)
	if plan.ClusterUID.IsUnknown() || plan.ClusterUID.IsNull() {
		plan.ClusterUID = types.StringValue(cluster.Identity)
	}
	live, err := c.Get(ctx, target.GVK(), target.Namespace, target.Name)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		diags.AddAttributeError(path.Root("target"), "Target does not exist",
			fmt.Sprintf("%s does not exist. k8sconnect_patch changes objects that already exist; to create it, use k8sconnect_object.", target))
		return false
	}
	if err != nil {
		diags.AddError("Could not read the target", fmt.Sprintf("Reading %s: %v", target, err))
		return false
	}
	if err := selfPatchError(live, target); err != nil {
		diags.AddAttributeError(path.Root("target"), "Cannot patch an object k8sconnect_object manages", err.Error())
		return false
	}
	manager := FieldManager(plan.ID.ValueString())
	red := redactor(plan.ID)
	defer scrubLater(red, diags, ct, target, live.Object)()
	result, err := sendUnrivalled(ctx, c, target, ct, manager, plan, live)
	var rival *rivalError
	switch {
	case errors.As(err, &rival):
		diags.AddAttributeError(contentPath(*plan), "Another k8sconnect_patch owns these fields", rival.Error())
		return false
	case err != nil:
		diags.AddError("Patch failed", fmt.Sprintf("Patching %s failed: %s\n\n%s", target, rejection(err, ct, live), connection.Remedy(err)))
		return false
	}
	obs, err := projection.ObserveRedacted(result, manager, nil, nil, nil, red)
	if err != nil {
		diags.AddError("Patch applied, but its result could not be read", err.Error())
		return false
	}
	planned := plan.ManagedFields
	plan.ManagedFields = projectionValue(ctx, obs.Projection, diags)
	stored := obs.Projection
	if !planned.IsUnknown() && !planned.Equal(plan.ManagedFields) {
		// Terraform requires the planned value; the next refresh shows the difference.
		tflog.Warn(ctx, "patch result differs from the dry-run prediction", map[string]any{"target": target.String()})
		plan.ManagedFields = planned
		stored = ownership.StateProjection(ctx, planned)
	}
	plan.FieldOwnership = ownersValue(ctx, obs.Ownership, diags)
	if plan.PreviousOwners.IsUnknown() {
		plan.PreviousOwners = ownersValue(ctx, previousOwners(live, manager, obs.Projection), diags)
	}
	diags.Append(ownership.Record(ctx, private, obs, stored)...)
	return !diags.HasError()
}

// idFor derives a new patch's id, and so its field manager, from what it
// patches and how. A create that landed on the server but failed before the
// engine recorded it (a lost response, a killed process) is then finished by
// the next run under the same manager, instead of that run finding a
// k8sconnect-patch manager it does not know and refusing it as a rival.
// docs/adr/0002-crash-safe-patch.md has the cases.
func idFor(target manifest.Identity, ct *content) string {
	h := sha256.New()
	for _, part := range []string{target.APIVersion, target.Kind, target.Namespace, target.Name, string(ct.patchType)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(ct.body) // canonical JSON: map keys sorted, formatting gone
	return hex.EncodeToString(h.Sum(nil)[:8])
}
