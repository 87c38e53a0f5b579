package sensitive

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/diagtext"
)

// ScrubDiagnostics rewrites diags so that no sensitive value of objs appears in
// a summary or detail (see Scrub). Resources defer it in every operation that
// may quote a server's message about an object, since API servers and
// admission webhooks may echo the values they reject.
func (r Redactor) ScrubDiagnostics(diags *diag.Diagnostics, objs ...map[string]any) {
	r.ScrubDiagnosticsLater(diags, objs...)()
}

// ScrubDiagnosticsLater is ScrubDiagnostics of the sensitive values objs hold
// now, for a caller that changes objs before the diagnostics are final: the
// values are taken at once (a few strings), where a deep copy of a large
// object would cost far more than they do.
func (r Redactor) ScrubDiagnosticsLater(diags *diag.Diagnostics, objs ...map[string]any) func() {
	values := r.scrubbed(objs)
	return func() { diagtext.Rewrite(diags, func(s string) string { return scrubValues(s, values) }) }
}
