package object

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

var pathSensitiveFields = path.Root("sensitive_fields")

var sensitiveFieldsAttribute = schema.ListAttribute{
	Description: "Fields whose values are secret, for kinds other than Secret that carry credentials (a CRD's " +
		"`spec.password`, say), in the same path language as ignore_fields; a path covers everything under it. " +
		"A core v1 Secret's `data` and `stringData` are always sensitive. Sensitive values never appear in " +
		"managed_state_projection, private state, warnings, errors or logs: the projection holds " +
		"`(sensitive, hmac-sha256:<16 hex>)`, a hash keyed by this resource's id, so a change to the value " +
		"(drift) still shows, and is reverted, without showing the value.",
	ElementType: types.StringType,
	Optional:    true,
}

// redactor is the resource's sensitive.Redactor: keyed by its id (unknown while
// a create is planned) and covering its sensitive_fields. While
// sensitive_fields is unknown or invalid every value is hidden.
func redactor(ctx context.Context, m model, diags *diag.Diagnostics) sensitive.Redactor {
	if m.SensitiveFields.IsUnknown() {
		return sensitive.Unknown()
	}
	var paths []objectpath.Path
	if !m.SensitiveFields.IsNull() {
		var raw []types.String
		diags.Append(m.SensitiveFields.ElementsAs(ctx, &raw, false)...)
		for i, s := range raw {
			if s.IsUnknown() {
				return sensitive.Unknown()
			}
			p, err := objectpath.Parse(s.ValueString())
			if err != nil {
				diags.AddAttributeError(pathSensitiveFields.AtListIndex(i), "Invalid sensitive_fields entry", err.Error())
				return sensitive.Unknown()
			}
			paths = append(paths, p)
		}
	}
	key := ""
	if !m.ID.IsUnknown() && !m.ID.IsNull() {
		key = m.ID.ValueString()
	}
	return sensitive.New(key, paths)
}
