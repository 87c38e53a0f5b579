package connection

import (
	"context"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// maxClusterIDLength bounds cluster_id: room for a cloud resource ID (an EKS
// ARN, an AKS resource ID), short enough to read in a message.
const maxClusterIDLength = 256

// clusterIDPattern is what a cluster_id may hold: a name or a cloud
// resource ID, never spaces or quotes that would make a message ambiguous.
var clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:/@-]+$`)

// clusterIDValidators check cluster_id when the configuration is validated,
// before any plan: framework-validators' checks, reported as
// requestTimeoutValidator reports, attached to no attribute.
var clusterIDValidators = []validator.String{unattached{[]validator.String{
	stringvalidator.LengthBetween(1, maxClusterIDLength),
	stringvalidator.RegexMatches(clusterIDPattern, "must be made of letters, digits and . _ - : / @ only"),
}}}

// unattached runs validators and reports their errors on no attribute: the
// engines print the source of the attribute an error names, and the source
// of cluster_connection holds its credentials (ReportClientError).
type unattached struct{ validators []validator.String }

var _ validator.String = unattached{}

func (u unattached) Description(ctx context.Context) string {
	var d string
	for i, v := range u.validators {
		if i > 0 {
			d += "; "
		}
		d += v.Description(ctx)
	}
	return d
}

func (u unattached) MarkdownDescription(ctx context.Context) string { return u.Description(ctx) }

func (u unattached) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	for _, v := range u.validators {
		var got validator.StringResponse
		v.ValidateString(ctx, req, &got)
		for _, d := range got.Diagnostics.Errors() {
			resp.Diagnostics.Append(diag.NewErrorDiagnostic("Invalid cluster_connection", d.Detail()))
		}
		if resp.Diagnostics.HasError() {
			return // one reason is enough: an empty value is also not made of the allowed characters
		}
	}
}
