package patch

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
)

// Delete releases the patch's fields: values stay, our manager goes.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.phase.Applying()
	state, target, c, ok := r.stored(ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Delete)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "The patch stays in state; the next destroy releases its fields again.")
	if _, err := c.ConfirmCluster(ctx, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), target.String(), target.Namespace); err != nil {
		resp.Diagnostics.AddError("Destroy refused: cannot confirm the cluster", fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return
	}
	var fields map[string]string
	resp.Diagnostics.Append(state.ManagedFields.ElementsAs(ctx, &fields, false)...)
	if err := release(ctx, c, target, FieldManager(state.ID.ValueString()), fields); err != nil {
		resp.Diagnostics.AddError("Could not release the patched fields", err.Error())
	}
}
