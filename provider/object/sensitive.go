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
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
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

// warnSecretDestroyed speaks to the user who upgraded past the release in
// which k8sconnect_yaml_split and k8sconnect_yaml_scoped stopped handing out
// Secrets in manifests and namespaced: a for_each over those maps loses its
// Secrets, and the plan destroys each one, though the bundle still holds it.
// The provider cannot tell that destroy from a wanted one (for both, the
// engine sends no configuration), so the warning says both and names the
// recipe that keeps the object. It is kept to the population the change hit:
// a Secret given by yaml_body (one given by yaml_body_wo came from sensitive
// already), under Terraform and OpenTofu (the bridge's programs do not
// for_each over a data source's map). A terraform destroy of such Secrets
// gets it too, once per Secret: one line of reading, against a credential
// destroyed unseen.
func (r *Resource) warnSecretDestroyed(ctx context.Context, prior model, diags *diag.Diagnostics) {
	if prior.writeOnly() || r.handOnPlans || r.phase.Replanning() {
		return
	}
	ref, d := resourceref.FromObject(ctx, prior.ResourceRef)
	id := ref.Identity()
	if d.HasError() || !sensitive.IsSecret(id.APIVersion, id.Kind) {
		return
	}
	diags.AddWarning("A Secret given by yaml_body is destroyed",
		fmt.Sprintf("This plan destroys %s, given by yaml_body. If that is what you want, nothing is wrong. If it "+
			"came from k8sconnect_yaml_split or k8sconnect_yaml_scoped through a for_each over manifests or "+
			"namespaced, it is destroyed because those data sources now hand out every Secret in sensitive, keyed "+
			"in sensitive_keys, and no longer in those maps. To keep it (the same object, the same UID), take it out "+
			"of state with `state rm` and import it into a resource over sensitive_keys that gives it by "+
			"yaml_body_wo, as the \"Secrets in a bundle\" section of the Secrets guide shows.", id))
}
