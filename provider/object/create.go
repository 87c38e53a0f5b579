package object

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// annotationCreatePending marks an object whose create has not finished: it is
// in no state yet. A create that finds it may take it over once the marker's
// lease has run out (its creator is gone), so a create cut short by a lost
// response or a killed process converges on re-run with the same object
// (docs/adr/0001-crash-safe-create.md).
const annotationCreatePending = "k8sconnect.io/create-pending"

var pendingPath = objectpath.Path{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationCreatePending)}

// pendingLease is how long an unfinished create's marker protects its object
// from being taken over. A live creator removes its marker within its own retry
// window (orderingTimeout); a marker still there after the lease belongs to a
// run that was killed. K8SCONNECT_CREATE_PENDING_LEASE overrides it (a Go
// duration), for API servers slow enough to need longer, and for tests.
func pendingLease() time.Duration {
	return durations.PendingLease(2 * orderingTimeout)
}

// claimedError is the refusal of a create whose object belongs to someone else.
type claimedError struct{ msg string }

func (e *claimedError) Error() string { return e.msg }

// create makes a new object in two steps: a create-only apply that carries the
// pending marker, then the same configuration without it, bound to the UID the
// first step created. Only an object whose marker is gone was created by a run
// that reported success (and so is in some state).
func create(ctx context.Context, c *connection.Client, desired *unstructured.Unstructured, id string) (*unstructured.Unstructured, error) {
	pending := metadataCopy(desired)
	setAnnotation(pending, annotationCreatePending, id)
	setCreatedByRun(pending)
	created, err := createOnly(ctx, c, pending, id)
	if err != nil {
		return nil, err
	}
	// Only the UID and namespace of the first step's answer are used from
	// here on, so the answer (as large as the object) is garbage during the
	// second step.
	uid, ns := created.GetUID(), created.GetNamespace()
	final := metadataCopy(desired)
	setCreatedByRun(final)
	final.SetUID(uid)
	final.SetNamespace(ns)
	applied, err := applyWithOrdering(ctx, c, final)
	if err != nil && connection.Unreachable(err) {
		// Every answer was lost for the whole retry window, but the apply
		// may have landed: if the object now is exactly what it would have
		// made (our id, no marker, the same UID), the create is done.
		if live, gerr := settlingRead(ctx, c, manifest.IdentityOf(final)); gerr == nil && live.GetUID() == uid &&
			live.GetAnnotations()[annotationOwnedBy] == id && !createPending(live) {
			tflog.Info(ctx, "the second step's answer was lost, but reading the object shows it landed",
				map[string]any{"object": manifest.IdentityOf(final).String()})
			applied, err = live, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w\nThe object was created, but removing its %s marker was not confirmed. Run terraform "+
			"apply, tofu apply or pulumi up again: once the marker's lease (%s) has passed, the same object is "+
			"picked up", err, annotationCreatePending, pendingLease())
	}
	if ns := applied.GetNamespace(); ns != "" {
		desired.SetNamespace(ns)
	}
	return applied, nil
}

// settlingRead reads the object a write whose answer was lost may have
// made. A connection that gave no answer for a whole budget sends one probe
// at a time, a few seconds apart, and fails other requests unsent: this read
// is worth waiting for the probe that lets it through (up to three tries).
func settlingRead(ctx context.Context, c *connection.Client, id manifest.Identity) (*unstructured.Unstructured, error) {
	var live *unstructured.Unstructured
	var err error
	for try := 0; try < 3; try++ {
		if live, err = get(ctx, c, id); err == nil || !connection.IsNetworkFailure(err) {
			return live, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2500 * time.Millisecond):
		}
	}
	return live, err
}

// createOnly performs the first step. When the object exists already it decides
// from the live object: our own earlier attempt (its response was lost) goes
// on; another resource's unfinished create is waited for and taken over only if
// its lease runs out; anything else is refused.
func createOnly(ctx context.Context, c *connection.Client, pending *unstructured.Unstructured, id string) (*unstructured.Unstructured, error) {
	ident := manifest.IdentityOf(pending)
	var refused error // the last 409 of a create-only apply that a read found no object for
	for attempt := 0; attempt < 5; attempt++ {
		obj := metadataCopy(pending)
		obj.SetResourceVersion(ssa.CreateOnlyVersion)
		created, err := applyWithOrdering(ctx, c, obj)
		if err == nil {
			pending.SetNamespace(created.GetNamespace())
			return created, nil
		}
		if !apierrors.IsConflict(err) {
			return nil, err
		}
		conflict := err
		ident.Namespace = obj.GetNamespace()
		live, err := get(ctx, c, ident)
		if apierrors.IsNotFound(err) {
			refused = conflict
			continue // deleted since: try the create again
		}
		refused = nil
		if err != nil {
			return nil, fmt.Errorf("%s exists, and reading it to see whose it is failed, so nothing was changed: %w", ident, err)
		}
		owner := live.GetAnnotations()[annotationOwnedBy]
		stale := live
		switch {
		case owner == id:
			return live, nil // our own first step landed; its response was lost
		case adoptable(live):
			tflog.Info(ctx, "taking over an object a killed run left",
				map[string]any{"object": ident.String(), "run": live.GetAnnotations()[annotationCreatedByRun], "left_id": owner})
		case !createPending(live):
			return nil, &claimedError{adoptionError(live, ident).Error()}
		default:
			if stale, err = awaitPending(ctx, c, ident, live); err != nil {
				return nil, err
			}
			if stale == nil {
				continue // finished, deleted or changed: look again
			}
			tflog.Info(ctx, "taking over an object whose create did not finish",
				map[string]any{"object": ident.String(), "unfinished_id": owner})
		}
		// Bound to the version judged stale: if its creator finishes after
		// all, this apply fails with a conflict and the loop looks again.
		takeover := metadataCopy(pending)
		takeover.SetUID(stale.GetUID())
		takeover.SetResourceVersion(stale.GetResourceVersion())
		taken, err := applyWithOrdering(ctx, c, takeover)
		if err == nil {
			return taken, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
			return nil, err
		}
	}
	if refused != nil {
		// No rival: the server (or what answers in its place) refused the
		// create with 409 while no object of that name existed.
		return nil, fmt.Errorf("the API server answered 409 Conflict to every create of %s, though a read found no "+
			"object of that name; nothing was created. The server said: %w", ident, refused)
	}
	return nil, fmt.Errorf("%s kept changing while k8sconnect tried to create it; another tool or resource is "+
		"writing it. Nothing was taken over", ident)
}

// awaitPending watches an object another create left unfinished. It returns
// the object when its marker outlived the lease unchanged (the creator is
// gone), or nil when the object changed in the meantime (finished, deleted or
// rewritten), for the caller to look again.
func awaitPending(ctx context.Context, c *connection.Client, ident manifest.Identity, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	lease := pendingLease()
	deadline := time.Now().Add(lease)
	if at := markedAt(live); !at.IsZero() {
		// The server's clock stamped the marker; a local clock running ahead
		// would shorten the wait, so never wait less than a tenth of the lease.
		deadline = at.Add(lease)
		if floor := time.Now().Add(lease / 10); deadline.Before(floor) {
			deadline = floor
		}
		if latest := time.Now().Add(lease); deadline.After(latest) {
			deadline = latest
		}
	}
	tflog.Info(ctx, "an unfinished create holds this object; waiting for it to finish or for its lease to pass",
		map[string]any{"object": ident.String(), "unfinished_id": live.GetAnnotations()[annotationCreatePending], "until": deadline.Format(time.RFC3339)})
	for {
		wait := min(500*time.Millisecond, time.Until(deadline))
		if wait <= 0 {
			return live, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		now, err := get(ctx, c, ident)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			if connection.Unreachable(err) {
				continue
			}
			return nil, err
		}
		if now.GetResourceVersion() != live.GetResourceVersion() {
			return nil, nil
		}
	}
}

// markedAt is when our field manager last wrote the object, by the server's
// clock: for an object with the pending marker, when the marker was set.
func markedAt(obj *unstructured.Unstructured) time.Time {
	var at time.Time
	for _, e := range obj.GetManagedFields() {
		if e.Manager == ssa.FieldManager && e.Time != nil && e.Time.After(at) {
			at = e.Time.Time
		}
	}
	return at
}

func createPending(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[annotationCreatePending] != ""
}

// metadataCopy is obj with its own top level and metadata, sharing everything
// else: enough for the requests here, which set only metadata fields (a
// marker, the UID, a resourceVersion, the namespace) on what they send. A
// deep copy of a CRD of several hundred KB is megabytes of maps, and a create
// made three of them.
func metadataCopy(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		out[k] = v
	}
	if m, ok := obj.Object["metadata"].(map[string]any); ok {
		meta := make(map[string]any, len(m)+2)
		for k, v := range m {
			meta[k] = v
		}
		out["metadata"] = meta
	}
	return &unstructured.Unstructured{Object: out}
}
