package sensitive

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// ScrubDiagnostics rewrites diags so that no sensitive value of objs appears in
// a summary or detail (see Scrub). Resources defer it in every operation that
// may quote a server's message about an object, since API servers and
// admission webhooks may echo the values they reject.
func (r Redactor) ScrubDiagnostics(diags *diag.Diagnostics, objs ...map[string]any) {
	if diags == nil || len(*diags) == 0 {
		return
	}
	out := make(diag.Diagnostics, 0, len(*diags))
	for _, d := range *diags {
		summary, detail := r.Scrub(d.Summary(), objs...), r.Scrub(d.Detail(), objs...)
		if summary == d.Summary() && detail == d.Detail() {
			out = append(out, d)
			continue
		}
		var nd diag.Diagnostic
		if d.Severity() == diag.SeverityError {
			nd = diag.NewErrorDiagnostic(summary, detail)
		} else {
			nd = diag.NewWarningDiagnostic(summary, detail)
		}
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			nd = diag.WithPath(wp.Path(), nd)
		}
		out = append(out, nd)
	}
	*diags = out
}
