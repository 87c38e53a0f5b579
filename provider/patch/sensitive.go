package patch

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
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

// scrubLater hides from diags, when called, every value that a message about
// sending ct to target must not show, taken now: the sensitive values of the
// live target and of the patch as the target would hold them (a Secret's data,
// encoded and decoded, and stringData), and every value of a write-only patch,
// whatever its path, since the user made all of it secret. The API server and
// admission webhooks may quote the values they reject.
func scrubLater(red sensitive.Redactor, diags *diag.Diagnostics, ct *content, target manifest.Identity, live map[string]any) func() {
	objs := heldValues(ct)
	for _, obj := range objs {
		if ct.given.writeOnly {
			red = red.Also(sensitive.Leaves(obj))
		}
		obj["apiVersion"], obj["kind"] = target.APIVersion, target.Kind
	}
	return red.ScrubDiagnosticsLater(diags, append(objs, live)...)
}

// heldValues is the patch as the target would hold its values: an apply or
// merge patch as it is, a JSON Patch as one object per operation, holding
// the operation's value at its path (the value an add or replace writes, or
// a test compares: a secret either way). Paths, ops and keys are not values:
// messages keep them.
func heldValues(ct *content) []map[string]any {
	if ct.patchType != ktypes.JSONPatchType {
		obj := map[string]any{}
		_ = kubejson.Unmarshal(ct.body, &obj)
		return []map[string]any{obj}
	}
	var ops []map[string]any
	_ = kubejson.Unmarshal(ct.body, &ops)
	var objs []map[string]any
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for _, op := range ops {
		value, ok := op["value"]
		pointer, _ := op["path"].(string)
		if whole, isObject := value.(map[string]any); ok && pointer == "" && isObject {
			objs = append(objs, whole) // the whole document replaced
		}
		if !ok || !strings.HasPrefix(pointer, "/") {
			continue
		}
		tokens := strings.Split(pointer[1:], "/")
		held := map[string]any{unescape.Replace(tokens[len(tokens)-1]): value}
		for i := len(tokens) - 2; i >= 0; i-- {
			held = map[string]any{unescape.Replace(tokens[i]): held}
		}
		objs = append(objs, held)
	}
	return objs
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
