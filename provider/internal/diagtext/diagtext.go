// Package diagtext rewrites the text of diagnostics, keeping their severity
// and attribute path: one way for every pass that must change what a message
// says after it was written (scrubbing secret values, speaking the caller's
// names).
package diagtext

import "github.com/hashicorp/terraform-plugin-framework/diag"

// Rewrite replaces each diagnostic's summary and detail with f of them.
func Rewrite(diags *diag.Diagnostics, f func(string) string) {
	if diags == nil || len(*diags) == 0 {
		return
	}
	out := make(diag.Diagnostics, 0, len(*diags))
	for _, d := range *diags {
		summary, detail := f(d.Summary()), f(d.Detail())
		if summary == d.Summary() && detail == d.Detail() {
			out = append(out, d)
			continue
		}
		out = append(out, withText(d, summary, detail))
	}
	*diags = out
}

// withText is d with another summary and detail.
func withText(d diag.Diagnostic, summary, detail string) diag.Diagnostic {
	var nd diag.Diagnostic
	if d.Severity() == diag.SeverityError {
		nd = diag.NewErrorDiagnostic(summary, detail)
	} else {
		nd = diag.NewWarningDiagnostic(summary, detail)
	}
	if wp, ok := d.(diag.DiagnosticWithPath); ok {
		nd = diag.WithPath(wp.Path(), nd)
	}
	return nd
}
