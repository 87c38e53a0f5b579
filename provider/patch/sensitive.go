package patch

import (
	"github.com/hashicorp/terraform-plugin-framework/types"

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
