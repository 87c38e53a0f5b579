package objectplan

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Object is one object to plan.
type Object struct {
	// Desired is the object the apply will send (the dry run fills in its
	// namespace, as the apply will); Body identifies it for
	// answers handed on (the same Body is the same question). Without a
	// Body no answer is reused or handed on.
	Desired *unstructured.Unstructured
	Body    []byte
	// Live is the object in the cluster, as just read or handed on (nil when
	// it does not exist); Recent is what the last call of this process
	// handed on of it.
	Live   *unstructured.Unstructured
	Recent handon.Read
	// Last is what the last apply of it left; nil for an object the
	// resource has not applied.
	Last *Last
	// Marks are fields the resource itself writes that no projection shows
	// (its own annotations); Ignore the fields ignore_fields leaves to
	// other managers; Owned what k8sconnect owned at the last apply, shown
	// too though another manager took it since.
	Marks  []objectpath.Path
	Ignore []objectpath.Path
	Owned  *fieldpath.Set
	// Redactor renders sensitive values as the resource's state keeps them.
	Redactor sensitive.Redactor
}

// Last is what the last apply of an object left.
type Last struct {
	// Private is the object's own private state (ownership.Record's).
	Private privatestate.Reader
	// Stored is its projection in state.
	Stored projection.Projection
	// SameConfiguration: the configuration planned now is the one that
	// apply sent. Only then can the object be unchanged since.
	SameConfiguration bool
}

// Planned is one object's plan.
type Planned struct {
	// Observation is the projection of what the apply will store.
	Observation projection.Observation
	// Dry is the dry run's answer (asked, or handed on); nil when the object
	// is unchanged since the last apply and none was needed.
	Dry *unstructured.Unstructured
	// Unchanged: the object holds what the last apply stored, and this
	// apply would store the same.
	Unchanged bool
	// HandOn is what this plan asked, for the next call to take; empty when
	// it asked nothing new.
	HandOn handon.Read
}

// Plan plans o. An object the last apply made, planned with the same
// configuration and untouched since (same values, same owners), is not
// dry-run: the apply would store what it stored then (ADR 0011). Otherwise a
// dry run of the apply answers, or the answer another plan in this process
// got for the same body against the same read. An error is the dry run's,
// for the caller to explain in its own terms.
func Plan(ctx context.Context, c *connection.Client, o Object) (Planned, error) {
	if o.Live != nil && o.Last != nil && o.Last.SameConfiguration {
		now, unchanged := ownershipUnchanged(ctx, o)
		if unchanged {
			return Planned{Observation: now, Unchanged: true}, nil
		}
	}
	dry, reused := o.Recent.Answer(o.Body)
	var handOn handon.Read
	if !reused {
		var err error
		dry, err = ssa.Apply(ctx, c, o.Desired, ssa.Options{FieldManager: ssa.FieldManager, DryRun: true})
		if err != nil {
			return Planned{}, err
		}
		if len(o.Body) > 0 {
			handOn = handon.Read{Obj: o.Recent.Obj, Seen: o.Recent.Seen, Sent: o.Body, Dry: dry.DeepCopy()}
		}
	}
	obs, err := projection.ObserveRedacted(dry, ssa.FieldManager, o.Owned, o.Marks, o.Ignore, o.Redactor)
	if err != nil {
		return Planned{}, err
	}
	return Planned{Observation: obs, Dry: dry, HandOn: handOn}, nil
}

// Read reads the object id names, and notes when, for a handon.Read. A
// missing object is the server's NotFound, for the caller to tell apart.
func Read(ctx context.Context, c *connection.Client, id manifest.Identity) (handon.Read, error) {
	seen := time.Now()
	obj, err := c.Get(ctx, id.GVK(), id.Namespace, id.Name)
	if meta.IsNoMatchError(err) {
		if missing := c.MissingCoreKind(id.GVK()); missing != nil {
			// A core kind: a typo, or discovery failing, which no CRD
			// mends and which is no "kind not served yet".
			err = missing
		}
	}
	return handon.Read{Obj: obj, Seen: seen}, err
}

// ownershipUnchanged observes o's live object as its last apply's record
// and reports whether it still holds what that apply stored
// (ownership.UnchangedSinceApply).
func ownershipUnchanged(ctx context.Context, o Object) (projection.Observation, bool) {
	return ownership.UnchangedSinceApply(ctx, o.Last.Private, o.Live, ssa.FieldManager, o.Marks, o.Ignore, o.Last.Stored, o.Redactor)
}
