package wait

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
)

// onlyConnectionChanged reports whether plan waits on the same object for the
// same thing as state, so that at most resource_ref.cluster_connection
// differs: a rotated credential copied from the object's own connection. Such
// a change does not make the wait wait again (Read has checked that the object
// is the one the wait succeeded on).
func onlyConnectionChanged(ctx context.Context, plan, state model) bool {
	if !plan.WaitFor.Equal(state.WaitFor) || plan.ResourceRef.IsUnknown() || state.ResourceRef.IsNull() {
		return false
	}
	p, d1 := resourceref.FromObject(ctx, plan.ResourceRef)
	s, d2 := resourceref.FromObject(ctx, state.ResourceRef)
	if d1.HasError() || d2.HasError() {
		return false
	}
	for _, pair := range [][2]types.String{{p.APIVersion, s.APIVersion}, {p.Kind, s.Kind}, {p.Namespace, s.Namespace}, {p.Name, s.Name}} {
		if pair[0].IsUnknown() || !pair[0].Equal(pair[1]) {
			return false
		}
	}
	return true
}
