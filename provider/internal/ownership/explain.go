package ownership

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
