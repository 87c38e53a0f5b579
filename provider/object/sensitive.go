package object

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
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

// warnSecretInYAMLBody warns that a Secret given by yaml_body is kept in
// state, and in plans unless the user wrapped it in sensitive(), which a
// provider cannot see. The plan calls it only when yaml_body is created or
// changed, the plans that would print it: a user who chose yaml_body (and
// sensitive()) knowingly hears it once per change, not at every plan, and one
// who moved to yaml_body_wo never. Pulumi is not warned: the bridge marks such
// a yamlBody secret by itself (docs/adr/0003-secrets-never-in-clear.md).
func (r *Resource) warnSecretInYAMLBody(plan model, id manifest.Identity, diags *diag.Diagnostics) {
	if plan.writeOnly() || r.handOnPlans || r.phase.Replanning() || !sensitive.IsSecret(id.APIVersion, id.Kind) {
		return
	}
	// Not an attribute warning: the engine would print yaml_body's source
	// lines beside it, values and all.
	diags.AddWarning("A Secret in yaml_body is kept in state",
		fmt.Sprintf("%s is given by yaml_body, which Terraform and OpenTofu keep in state in clear, and show in "+
			"plans unless it is wrapped in sensitive(). Give it by yaml_body_wo instead, with "+
			"yaml_body_wo_revision: a write-only attribute (Terraform 1.11 or OpenTofu 1.11 and later), never "+
			"kept in state or shown in a plan, still checked for drift. This warning comes with each plan that "+
			"creates or changes yaml_body.", id))
}
