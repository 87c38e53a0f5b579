package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/deletion"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Kinds whose deletion routinely waits on other objects (namespace contents,
// custom resources, volume detachment, ordered pod shutdown).
var slowDeletes = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "PersistentVolume": true,
	"PersistentVolumeClaim": true, "StatefulSet": true,
}

func deleteTimeoutFor(kind string, configured types.String) time.Duration {
	if d, err := time.ParseDuration(configured.ValueString()); err == nil && d > 0 {
		return d
	}
	if slowDeletes[kind] {
		return 10 * time.Minute
	}
	return 5 * time.Minute
}

// stuckError is a delete that timed out; it says what the object waits for.
type stuckError struct {
	id         manifest.Identity
	uid        ktypes.UID
	timeout    time.Duration
	finalizers []string
	remaining  []string // what its status says holds it (deletion.Holding)
	// op, when set, is the operation's deadline (timeouts.delete), which
	// ended the wait before timeout did.
	op *optimeout.Exceeded
}

func (e *stuckError) Error() string {
	var b strings.Builder
	if e.op != nil {
		fmt.Fprintf(&b, "%s; %s still exists. It stays in state; the next destroy deletes it again and waits.",
			e.op.While(fmt.Sprintf("waiting for %s to be deleted", e.id)), e.id)
		if len(e.finalizers) > 0 {
			fmt.Fprintf(&b, " It waits for finalizers: %s.", strings.Join(e.finalizers, ", "))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s still exists %s after deletion was requested.", e.id, e.timeout)
	if len(e.finalizers) > 0 {
		fmt.Fprintf(&b, " It waits for finalizers: %s.", strings.Join(e.finalizers, ", "))
	}
	for _, r := range e.remaining {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	if len(e.remaining) > 0 && e.id.Kind == "Namespace" {
		// force_destroy clears the Namespace's own finalizers, which do not
		// hold it here: the objects left inside do.
		b.WriteString("\nThe Namespace goes once everything in it is gone. Check the controllers behind the finalizers " +
			"above, or remove those finalizers from the objects left inside; set delete_timeout to wait longer.")
		return b.String()
	}
	b.WriteString("\nCheck the controllers that own these finalizers; set delete_timeout to wait longer, or " +
		"force_destroy = true to remove the finalizers after the timeout.")
	return b.String()
}

// leftInPlaceError is a destroy that found an object that is not this
// resource's and so deleted nothing; the resource leaves state.
type leftInPlaceError struct{ msg string }

func (e *leftInPlaceError) Error() string { return e.msg }

// deleteAndWait deletes the object and waits until it is gone, so whatever
// depends on its absence (a namespace, a CRD, a re-create) sees it gone. It
// first reads the object and asks notOurs whether it may delete it; the delete
// is then bound to that object's UID and resourceVersion, so a different object
// that takes its place in between is never deleted.
func deleteAndWait(ctx context.Context, c *connection.Client, id manifest.Identity, timeout time.Duration,
	notOurs func(*unstructured.Unstructured) string) error {
	_, err := c.Mapping(id.GVK())
	if meta.IsNoMatchError(err) {
		return nil // the kind itself is gone (its CRD was deleted), so is the object
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", id, err)
	}
	var uid ktypes.UID
	// A delete is idempotent (an object already gone counts as deleted), so a
	// request whose fate is unknown is sent again; a precondition that fails
	// means the object changed since it was read: read and judge it again.
	err = ssa.Retry(ctx, ssa.TransientOrConflict, func(ctx context.Context) error {
		// Whose it is and its version are metadata: a large CRD is not
		// read whole to delete it.
		live, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		if err != nil {
			return err
		}
		if msg := notOurs(live); msg != "" {
			return &leftInPlaceError{msg + " Destroy deleted nothing; the resource was removed from state."}
		}
		uid = live.GetUID()
		return deletion.Delete(ctx, c, id, uid, live.GetResourceVersion())
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	var left *leftInPlaceError
	if errors.As(err, &left) {
		return err
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w\n\n%s", id, err, connection.Remedy(err))
	}
	last, err := deletion.WaitGone(ctx, c, id, uid, timeout)
	if err == nil {
		return nil
	}
	if last == nil || !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("waiting for %s to be deleted: %w", id, err)
	}
	stuck := &stuckError{id: id, uid: uid, timeout: timeout, finalizers: append([]string(nil), last.GetFinalizers()...),
		op: optimeout.Of(err)}
	sort.Strings(stuck.finalizers)
	stuck.remaining = deletion.Holding(last)
	return stuck
}

// removeFinalizersAndWait clears the finalizers of the object with uid; the
// JSON patch tests the UID first, so it never touches another object.
func removeFinalizersAndWait(ctx context.Context, c *connection.Client, id manifest.Identity, uid ktypes.UID) error {
	mapping, err := c.Mapping(id.GVK())
	if err != nil {
		return err
	}
	patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/uid","value":%q},{"op":"add","path":"/metadata/finalizers","value":[]}]`, uid)
	_, err = c.Resource(mapping, id.Namespace).Patch(ctx, id.Name, ktypes.JSONPatchType,
		[]byte(patch), metav1.PatchOptions{FieldManager: "k8sconnect-force-destroy"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("force_destroy could not remove the finalizers of %s (UID %s): %w", id, uid, err)
	}
	if _, err := deletion.WaitGone(ctx, c, id, uid, time.Minute); err != nil {
		return fmt.Errorf("%s still exists a minute after its finalizers were removed: %w", id, err)
	}
	return nil
}

// Delete deletes the object this resource created and nothing else: the
// object must carry this resource's id and UID, and the delete is bound to that
// UID, so an object someone re-created under the same name survives.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.phase.Applying()
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, state.Timeouts, optimeout.Delete)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "The resource stays in state; the next destroy tries again.")
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	c, ok := r.client(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	id := ref.Identity()
	if _, moving := pendingMove(ctx, req.Private); moving && id.Namespace == "" {
		id = inScope(c, id) // destroyed right after the move
	}
	if state.DeleteProtection.ValueBool() {
		resp.Diagnostics.AddError("Delete protection is on",
			fmt.Sprintf("%s has delete_protection = true. Set it to false and apply, then destroy (or replace) it.", id))
		return
	}
	if _, err := c.ConfirmCluster(ctx, connection.RecordedIn(ctx, state.ClusterUID.ValueString(), req.Private), id.String(), id.Namespace); err != nil {
		resp.Diagnostics.AddError("Delete refused: cannot confirm the cluster", fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return
	}
	timeout := deleteTimeoutFor(id.Kind, state.DeleteTimeout)
	forget(c, id)
	err := deleteAndWait(ctx, c, id, timeout, func(live *unstructured.Unstructured) string {
		return notOurs(live, state.ID.ValueString(), state.UID.ValueString())
	})
	var stuck *stuckError
	var left *leftInPlaceError
	switch {
	case errors.As(err, &left):
		resp.Diagnostics.AddWarning("Left in place: not this resource's object", left.Error())
		return
	case errors.As(err, &stuck) && stuck.op == nil && state.ForceDestroy.ValueBool():
		tflog.Warn(ctx, "force_destroy: removing finalizers", map[string]any{"object": id.String(), "finalizers": stuck.finalizers})
		err = removeFinalizersAndWait(ctx, c, id, stuck.uid)
	}
	switch {
	case connection.IsNetworkFailure(err):
		// deleteAndWait has said what to do.
		resp.Diagnostics.AddError(connection.NoAnswer+": delete not confirmed", err.Error())
	case err != nil:
		resp.Diagnostics.AddError("Delete failed", err.Error())
	}
}
