package connection

import "github.com/hashicorp/terraform-plugin-framework/diag"

// ReportClientError adds err, a failure to build a client from a
// cluster_connection (Cache.Client's error), to diags as "Invalid
// cluster_connection", attached to no attribute. Every such error goes through
// here, so that the rule holds everywhere: a connection error is never attached
// to cluster_connection. terraform and tofu print an error of a plan or a
// refresh that names an attribute under the source of that attribute's
// expression, every line of it, and a cluster_connection written out in the
// configuration holds its token, client key or kubeconfig in those lines: a
// failed plan would copy them into a CI log. The user loses nothing: err names
// the field at fault (cluster_connection.cluster_ca_certificate, say) and never
// quotes a credential (Model.RESTConfig), and the engine names the resource.
func ReportClientError(diags *diag.Diagnostics, err error) {
	diags.AddError("Invalid cluster_connection", err.Error())
}

// ReportUnknownConnection adds "Unknown cluster_connection" with detail to
// diags, for a step that needs a connection still unknown. It is attached to
// no attribute either, as ReportClientError says why: the attribute's source
// is printed whether or not its value is known.
func ReportUnknownConnection(diags *diag.Diagnostics, detail string) {
	diags.AddError("Unknown cluster_connection", detail)
}
