package objectplan

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Explanation says where and how a plan's warnings about one object go.
type Explanation struct {
	// Subject names the object in the warnings.
	Subject string
	// At is the attribute that holds the object's projection, named
	// Attribute in the warnings' text.
	At        path.Path
	Attribute string
	// Private is the object's private state: the last apply's record is
	// read from it and this plan's revert streaks written to it.
	Private   privatestate.ReadWriter
	Verbosity ownership.Verbosity
	// Options are ownership.Explain's: how a field is let go, for one.
	Options []ownership.Option
}

// Explain warns of what the plan p of o does that a diff does not show: a
// large value that changes (its fields, since the plan shows only a digest,
// ADR 0015), and the fields it takes from other managers or that others keep
// taking back (ADR 0008). An object unchanged since the last apply, or new,
// has nothing to explain.
func Explain(ctx context.Context, o Object, p Planned, e Explanation, diags *diag.Diagnostics) {
	if o.Live == nil || p.Unchanged {
		return
	}
	var stored projection.Projection
	if o.Last != nil {
		stored = o.Last.Stored
	}
	if p.Dry != nil {
		for _, detail := range projection.LargeChanges(e.Subject, e.Attribute, o.Live, p.Dry, p.Observation.Projection, stored, o.Redactor) {
			diags.AddAttributeWarning(e.At, projection.LargeChangesSummary, detail)
		}
	}
	opts := append([]ownership.Option{ownership.Redacting(o.Redactor)}, e.Options...)
	ownership.Explain(ctx, e.Subject, ssa.FieldManager, o.Live, p.Observation.Projection, stored, e.Private, e.Verbosity, diags, opts...)
}

// Drifted reports whether the live object holds other values in the fields
// the plan p sets than p will store. A plan against a state that no refresh
// brought up to date (a plain pulumi up) sees no change in its projection,
// since the state still holds what the last apply stored, and would leave
// drift it warns about (Explain) in place; this tells the resource that the
// apply must run all the same.
func Drifted(ctx context.Context, o Object, p Planned) bool {
	if o.Live == nil || o.Last == nil || p.Unchanged {
		return false
	}
	_, differs, err := ownership.LiveDiffers(ctx, o.Last.Private, o.Live, ssa.FieldManager, o.Marks, o.Ignore,
		p.Observation.Projection, o.Redactor)
	return err == nil && differs
}
