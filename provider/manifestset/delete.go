package manifestset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/deletion"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
)

// Delete deletes every object of the set, in Helm's uninstall order, each
// bound to its UID and only while it carries this set's part-of label (one
// another set or owner took since stays), then the parent.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	defer gcsettings.Raise(gcsettings.SetLimit)() // the whole bundle is in memory at once
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Delete)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "The set stays in state; the next destroy deletes what is left and waits again.")
	c, ok := r.clients.ClientFor(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	recentReads.Forget(c, state.ID.ValueString()) // what the plans read is about to change
	if _, err := c.ConfirmCluster(ctx, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private),
		"set "+state.ID.ValueString(), namespaceOf(&state)); err != nil {
		resp.Diagnostics.AddError("Destroy refused: cannot confirm the cluster", connection.Explain(err))
		return
	}
	timeout, ok := timeoutOf(&state, &resp.Diagnostics)
	if !ok {
		return
	}
	priv := loadPrivate(ctx, req.Private)
	// A destroy is an apply of no member with prune = true: every object
	// of the last apply goes.
	// A cluster-scoped custom resource parent has no namespace, whatever
	// the set's namespace is.
	p, err := scoped(c, parentOf(&state, &state, nil))
	if meta.IsNoMatchError(err) {
		err = nil // its kind is gone, and the parent with it
	}
	if err != nil {
		resp.Diagnostics.AddError("The set's ApplySet parent cannot be used", connection.Explain(err))
		return
	}
	run := &applyRun{c: c, plan: &model{Prune: types.BoolValue(true)}, ms: &members{}, parent: p,
		timeout: timeout, deadline: time.Now().Add(timeout), prior: private{}}
	for _, key := range slices.Sorted(maps.Keys(state.Objects.Elements())) {
		run.prior[key] = priv[key]
	}
	if err := run.prune(ctx); err != nil {
		resp.Diagnostics.AddError("Object of the set not deleted", connection.Explain(err))
		return
	}
	if err := deleteParent(ctx, c, run.parent); err != nil {
		resp.Diagnostics.AddError("ApplySet parent not deleted", connection.Explain(err))
	}
}

// deleteParent deletes the parent, bound to its UID, while it is still this
// set's; a custom resource parent, which the user made, only loses the
// set's marks, as kubectl would leave it.
func deleteParent(ctx context.Context, c *connection.Client, p parent) error {
	live, err := c.GetMetadata(ctx, p.gvk(), p.Namespace, p.Name)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil // gone, or its kind is
	}
	if err != nil {
		return err
	}
	if live.GetLabels()[labelApplySetID] != p.applySetID() {
		return nil // not this set's parent (any more)
	}
	if p.custom() {
		return unmarkParent(ctx, c, p, live)
	}
	id := manifest.Identity{APIVersion: p.APIVersion, Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
	if err := deletion.Delete(ctx, c, id, live.GetUID(), ""); err != nil && !apierrors.IsNotFound(err) &&
		!deletion.Replaced(ctx, c, id, live.GetUID(), err) {
		return fmt.Errorf("deleting %s %s: %w", p.Kind, p.id(), err)
	}
	return nil
}

// unmarkParent takes the ApplySet's label and annotations off a custom
// resource parent, bound to its UID.
func unmarkParent(ctx context.Context, c *connection.Client, p parent, live *unstructured.Unstructured) error {
	err := takeMarksOff(ctx, c, p.gvk(), live, parentFieldManager, []string{labelApplySetID},
		[]string{annotationTooling, annotationContainsGroupKinds, annotationNamespaces})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
