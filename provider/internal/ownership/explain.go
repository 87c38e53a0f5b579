package ownership

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
// records the revert streaks to keep if this plan is applied.
func Explain(ctx context.Context, subject, manager string, live *unstructured.Unstructured, planned projection.Projection,
	private privatestate.ReadWriter, v Verbosity, diags *diag.Diagnostics, opts ...Option) {
	recorded, ok, err := privatestate.Load[projection.Projection](ctx, private, privatestate.AppliedProjection)
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
	diags.Append(privatestate.Save(ctx, private, privatestate.RevertStreaks, next)...)
	for _, o := range opts {
		o(report)
	}
	for _, m := range report.Messages(v) {
		diags.AddWarning(m.Summary, m.Detail)
	}
}

// Record keeps what Explain needs next time: call it after every apply.
func Record(ctx context.Context, private privatestate.Writer, obs projection.Observation) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.Append(privatestate.SaveFieldSet(ctx, private, privatestate.OwnedFields, obs.Owned)...)
	diags.Append(privatestate.Save(ctx, private, privatestate.AppliedProjection, obs.Projection)...)
	return diags
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
