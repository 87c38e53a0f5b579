package patch

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/refresh"
)

// Read refreshes the patched fields from the target; a target deleted by
// someone else takes the patch out of state quietly.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	state, target, c, ok := r.stored(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Read)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer func() {
		if optimeout.KeepRead(ctx, &resp.Diagnostics, "the patch of "+target.String()) {
			resp.State.Raw = req.State.Raw
		}
	}()
	got := refresh.Object(ctx, c, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), resp.Private, target, "the patch of "+target.String(), &resp.Diagnostics)
	switch got.Outcome {
	case refresh.Found:
	case refresh.Gone:
		// Only a definite answer drops the patch: refused credentials or a
		// failed discovery never do.
		tflog.Info(ctx, "patch target is gone; removing the patch from state", map[string]any{"target": target.String()})
		resp.State.RemoveResource(ctx)
		return
	default:
		return
	}
	live := got.Live
	if state.ClusterUID.ValueString() == "" {
		state.ClusterUID = types.StringValue(got.Cluster)
	}
	prev, err := privatestate.LoadFieldSet(ctx, req.Private, privatestate.OwnedFields)
	if err != nil {
		resp.Diagnostics.AddWarning("Could not read the previously owned fields", err.Error())
	}
	obs, err := projection.ObserveRedacted(live, FieldManager(state.ID.ValueString()), prev, nil, nil, redactor(state.ID))
	if err != nil {
		resp.Diagnostics.AddError("Read failed", err.Error())
		return
	}
	resp.Diagnostics.Append(ownership.Refreshed(ctx, resp.Private, ownership.StateProjection(ctx, state.ManagedFields), obs.Projection)...)
	state.ManagedFields = projectionValue(ctx, obs.Projection, &resp.Diagnostics)
	state.FieldOwnership = ownersValue(ctx, obs.Ownership, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
