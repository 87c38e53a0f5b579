package ownership

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Option changes the wording of Explain's messages.
type Option func(*Report)

// LetGoBy sets Report.LetGo: how the resource hands fields to another manager.
func LetGoBy(format string) Option { return func(r *Report) { r.LetGo = format } }

// Redacting makes Explain render live values with the resource's redactor, the
// one its projection was rendered with; without it a Secret's data compares as
// sensitive.Pending.
func Redacting(red sensitive.Redactor) Option { return func(r *Report) { r.redactor = red } }

// Explain is what a resource's ModifyPlan calls after its dry run: it classifies
// the fields manager asserts, adds at most one warning per conflict kind, and
// records the revert streaks to keep if this plan is applied. stored is the
// projection in the prior state.
func Explain(ctx context.Context, subject, manager string, live *unstructured.Unstructured, planned, stored projection.Projection,
	private privatestate.ReadWriter, v Verbosity, diags *diag.Diagnostics, opts ...Option) {
	recorded, ok, err := applied(ctx, private, stored)
	if err != nil || !ok {
		return // no record of our last apply (an import, or state from an older version)
	}
	streaks, _, _ := privatestate.Load[map[string]Streak](ctx, private, privatestate.RevertStreaks)
	var cfg Report
	for _, o := range opts {
		o(&cfg)
	}
	report, next, impossible, err := Analyze(Plan{Subject: subject, Manager: manager, Live: live,
		Recorded: recorded, Planned: planned, Streaks: streaks, Redactor: cfg.redactor})
	if err != nil {
		tflog.Debug(ctx, "ownership analysis skipped", map[string]any{"object": subject, "error": err.Error()})
		return
	}
	for _, f := range impossible {
		tflog.Debug(ctx, "ownership transition the table calls impossible",
			map[string]any{"object": subject, "field": f.Path, "row": f.Transition.Row()})
	}
	if len(next) == 0 {
		diags.Append(private.SetKey(ctx, privatestate.RevertStreaks, nil)...) // an empty key is no key
	} else {
		diags.Append(privatestate.Save(ctx, private, privatestate.RevertStreaks, next)...)
	}
	for _, o := range opts {
		o(report)
	}
	for _, m := range report.Messages(v) {
		diags.AddWarning(m.Summary, m.Detail)
	}
}

// Record keeps what Explain needs next time: call it after every apply, with
// the apply's observation and the projection the new state holds (stored).
//
// The applied values are kept only where they differ from stored (the state
// keeps the planned values when the server stored others). Most of the time
// they are the same, and a private copy would double what each object costs
// in state: Terraform keeps private data base64-encoded twice over (once by
// the framework, once by Terraform), so a projection copied there costs 1.8
// times its size again. With no copy, the owned fields that Record always
// keeps say that stored is the record; a refresh that changes stored keeps the
// old values first (Refreshed).
func Record(ctx context.Context, private privatestate.Writer, obs projection.Observation, stored projection.Projection) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.Append(privatestate.SaveFieldSet(ctx, private, privatestate.OwnedFields, obs.Owned)...)
	if maps.Equal(obs.Projection, stored) {
		diags.Append(private.SetKey(ctx, privatestate.AppliedProjection, nil)...)
	} else {
		diags.Append(privatestate.Save(ctx, private, privatestate.AppliedProjection, obs.Projection)...)
	}
	return diags
}

// Refreshed is what a refresh calls before it replaces the projection in state
// (before) with the one it read (after): when the state's projection was the
// record of the last apply (see Record), the record is kept apart now.
func Refreshed(ctx context.Context, private privatestate.ReadWriter, before, after projection.Projection) diag.Diagnostics {
	if maps.Equal(before, after) {
		return nil
	}
	if raw, _ := private.GetKey(ctx, privatestate.AppliedProjection); len(raw) > 0 {
		return nil // kept apart already
	}
	if raw, _ := private.GetKey(ctx, privatestate.OwnedFields); len(raw) == 0 {
		return nil // no record of an apply (an import)
	}
	return privatestate.Save(ctx, private, privatestate.AppliedProjection, before)
}

// StateProjection is the value of a resource's projection attribute (the
// values of the fields it owns, as its state holds them); nil while unknown.
func StateProjection(ctx context.Context, m types.Map) projection.Projection {
	var p projection.Projection
	if m.IsUnknown() || m.ElementsAs(ctx, &p, false).HasError() {
		return nil
	}
	return p
}

// applied is our fields' values at our last apply: kept apart, or, since
// Record keeps owned fields after every apply, the projection in state.
func applied(ctx context.Context, private privatestate.Reader, stored projection.Projection) (projection.Projection, bool, error) {
	recorded, ok, err := privatestate.Load[projection.Projection](ctx, private, privatestate.AppliedProjection)
	if err != nil || ok {
		return recorded, ok, err
	}
	if raw, _ := private.GetKey(ctx, privatestate.OwnedFields); len(raw) == 0 {
		return nil, false, nil
	}
	return stored, true, nil
}

// LiveDiffers observes live for manager together with the fields it owned at
// its last apply (Record keeps them, so a field another manager has taken since
// is still projected, with its new value) and reports whether those values
// differ from planned, what the apply will set. Terraform refreshes state
// before planning, so the projection diff shows such drift already; Pulumi plans
// against its last saved state unless run with --refresh, and without this
// check would warn about drift and then leave it in place.
func LiveDiffers(ctx context.Context, private privatestate.Reader, live *unstructured.Unstructured, manager string,
	exclude, ignored []objectpath.Path, planned projection.Projection, red sensitive.Redactor) (now projection.Observation, differs bool, err error) {
	prev, _ := privatestate.LoadFieldSet(ctx, private, privatestate.OwnedFields)
	now, err = projection.ObserveRedacted(live, manager, prev, exclude, ignored, red)
	if err != nil {
		return now, false, err
	}
	return now, !maps.Equal(now.Projection, planned), nil
}

// UnchangedSinceApply reports whether our fields in live still hold what our
// last apply stored, and we still own exactly the fields we owned then: the
// record of that apply (Record) is the owned set and the applied projection,
// kept apart in private state once a refresh replaced the state's
// (stateProjection). Then applying the same configuration again stores the
// same, and a plan needs no dry run to know it. False without a record (an
// import, a move) and whenever a value or an owner changed.
func UnchangedSinceApply(ctx context.Context, private privatestate.Reader, live *unstructured.Unstructured, manager string,
	exclude, ignored []objectpath.Path, stateProjection projection.Projection, red sensitive.Redactor) (now projection.Observation, unchanged bool) {
	owned, err := privatestate.LoadFieldSet(ctx, private, privatestate.OwnedFields)
	if err != nil || owned == nil {
		return now, false
	}
	applied, kept, err := privatestate.Load[projection.Projection](ctx, private, privatestate.AppliedProjection)
	if err != nil {
		return now, false
	}
	if !kept {
		applied = stateProjection
	}
	if applied == nil {
		return now, false
	}
	now, err = projection.ObserveRedacted(live, manager, owned, exclude, ignored, red)
	if err != nil {
		return now, false
	}
	return now, maps.Equal(now.Projection, applied) && now.Owned.Equals(owned)
}
