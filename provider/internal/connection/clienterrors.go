package connection

import "github.com/hashicorp/terraform-plugin-framework/diag"

// The rule for where a connection error is attached: nowhere. An error that
// names an attribute is printed by terraform and tofu under the source of that
// attribute's expression, every line of it, and a cluster_connection written
// out in the configuration holds its token, client key or kubeconfig in those
// lines: a failed plan would copy them into a CI log. So every error about
// building a client from a cluster_connection goes through the two functions
// below, which attach it to the resource alone. The user loses nothing: the
// error names the field at fault (cluster_connection.cluster_ca_certificate,
// say) and the engine names the resource, and the error never quotes a
// credential (Model.RESTConfig).

// ReportClientError adds err, a failure to build a client from a
// cluster_connection (Cache.Client's error), to diags as "Invalid
// cluster_connection", not attached to the attribute: see the rule above.
func ReportClientError(diags *diag.Diagnostics, err error) {
	diags.AddError("Invalid cluster_connection", err.Error())
}

// ReportUnknownConnection adds "Unknown cluster_connection" with detail to
// diags, for a step that needs a connection still unknown, not attached to the
// attribute for the same reason: its source is printed whether or not its
// value is known.
func ReportUnknownConnection(diags *diag.Diagnostics, detail string) {
	diags.AddError("Unknown cluster_connection", detail)
}
