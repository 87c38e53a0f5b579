package patch

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// redactor hides a patched Secret's data and stringData in managed_fields, in
// private state and in messages, keyed by the patch's id (known at plan: it is
// derived from the target and the patch).
func redactor(id types.String) sensitive.Redactor {
	if id.IsUnknown() || id.IsNull() {
		return sensitive.New("", nil)
	}
	return sensitive.New(id.ValueString(), nil)
}

// warnSecretInPatch is the patch's twin of the object's warning on a Secret
// in yaml_body (docs/adr/0003-secrets-never-in-clear.md, item 13): a patch of
// a Secret given by an input kept in state. It names the write-only input of
// the same patch type, so following it changes nothing but where the patch
// is kept. The plan calls it only when the patch text is created or changed.
func (r *Resource) warnSecretInPatch(plan model, target manifest.Identity, diags *diag.Diagnostics) {
	in, ok := plan.given()
	if !ok || in.writeOnly || r.pulumi || r.phase.Replanning() || !sensitive.IsSecret(target.APIVersion, target.Kind) {
		return
	}
	diags.AddWarning("A patch of a Secret is kept in state",
		fmt.Sprintf("The patch of %s is given by %s, which Terraform and OpenTofu keep in state in clear, and show "+
			"in plans unless it is wrapped in sensitive(). Give it by %s instead, with %s: a "+
			"write-only attribute (Terraform 1.11 or OpenTofu 1.11 and later), never kept in state or shown in a "+
			"plan, still checked for drift. This warning comes with each plan that creates or changes the patch.",
			target, in.attr, in.twin, in.twin+"_revision"))
}
