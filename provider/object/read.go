package object

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/refresh"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
)

// Read refreshes the projection from the live object, so external changes to
// fields we own show as a diff on the next plan. It forgets the object only on
// a definite answer that it is gone: NotFound, a kind the cluster no longer
// serves, or an object of the same name with another UID. Refused credentials,
// server errors and broken connections keep state and warn.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	subject := "the object of " + state.ID.ValueString() // its identity, once known
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Read)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer func() {
		if optimeout.KeepRead(ctx, &resp.Diagnostics, subject) {
			resp.State.Raw = req.State.Raw
		}
	}()
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	_, moving := pendingMove(ctx, req.Private)
	if moving && state.ClusterConnection.IsNull() && (r.clients == nil || !r.clients.HasDefault()) {
		// Moved from a provider whose connection was its own: the plan
		// reads the object through this configuration's connection.
		markRefreshSkipped(ctx, resp.Private, true)
		return
	}
	c, ok := r.client(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	id := ref.Identity()
	subject = id.String()
	if moving && id.Namespace == "" {
		id = inScope(c, id)
		state.ResourceRef, diags = resourceref.Value(ctx, id, types.StringValue(id.Namespace), state.ClusterConnection)
		resp.Diagnostics.Append(diags...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("resource_ref"), state.ResourceRef)...)
	}
	got := refresh.Object(ctx, c, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), resp.Private, id, id.String(), &resp.Diagnostics)
	if got.Outcome == refresh.CredentialsRefused {
		// Credentials stored at the last apply and refused now (a rotated
		// token): the plan reads with the configuration's connection instead.
		markRefreshSkipped(ctx, resp.Private, true)
		return
	}
	if got.Asked {
		markRefreshSkipped(ctx, resp.Private, false)
	}
	switch got.Outcome {
	case refresh.Gone:
		resp.State.RemoveResource(ctx)
		return
	case refresh.Kept, refresh.Failed:
		return
	}
	live := got.Live
	if msg := notOurs(live, state.ID.ValueString(), state.UID.ValueString()); msg != "" {
		if !state.UID.IsNull() && string(live.GetUID()) != state.UID.ValueString() {
			// The object this resource created is gone; the one in its place
			// belongs to someone else and is left alone.
			resp.Diagnostics.AddWarning("The object was replaced by someone else", msg+
				" This resource no longer has an object: the next plan proposes to create it, and the create "+
				"refuses while the other object exists. Rename or remove one of the two.")
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.AddWarning("Another k8sconnect resource claims this object", msg+
			" Two resources now manage one object and will undo each other's changes. Remove one of them "+
			"(terraform state rm, tofu state rm or pulumi state delete).")
	}
	remember(c, live, got.Seen, nil, nil)
	recordInState(c, id, state.ID.ValueString())
	ignore, _ := ignorePaths(ctx, state.IgnoreFields, &resp.Diagnostics)
	prev, err := privatestate.LoadFieldSet(ctx, req.Private, privatestate.OwnedFields)
	if err != nil {
		resp.Diagnostics.AddWarning("Could not read the previously owned fields", err.Error())
	}
	obs, err := observe(live, prev, ignore, redactor(ctx, state, &resp.Diagnostics))
	if err != nil {
		resp.Diagnostics.AddError("Read failed", err.Error())
		return
	}
	resp.Diagnostics.Append(ownership.Refreshed(ctx, resp.Private, ownership.StateProjection(ctx, state.ManagedStateProjection), obs.Projection)...)
	resp.Diagnostics.Append(into(ctx, obs, &state)...)
	state.UID = types.StringValue(string(live.GetUID()))
	if state.ClusterUID.ValueString() == "" {
		state.ClusterUID = types.StringValue(got.Cluster)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// privateRefreshSkipped marks a state whose last Read was skipped because the
// stored credentials were refused (connection.StaleCredentials).
const privateRefreshSkipped = "refresh_skipped"

func markRefreshSkipped(ctx context.Context, w privatestate.Writer, skipped bool) {
	var v []byte
	if skipped {
		v = []byte("true")
	}
	_ = w.SetKey(ctx, privateRefreshSkipped, v)
}

func refreshSkipped(ctx context.Context, r privatestate.Reader) bool {
	v, _ := r.GetKey(ctx, privateRefreshSkipped)
	return string(v) == "true"
}
