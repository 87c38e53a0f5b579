// Package pulumiop carries on a call's context what the Pulumi bridge knows
// of the engine's operation and the Terraform protocol does not say: that
// the plan it asks for is applied at once.
//
// Under Pulumi, `pulumi up` previews in one plugin process and updates in
// another. The update's Create and Update each plan the resource and apply
// that plan straight away; nobody sees that plan, since the preview showed
// its own. A resource may then plan less, as long as everything that must
// refuse before anything is applied still refuses. Terraform and OpenTofu
// never set it: their plan at apply must repeat the values of the plan the
// user approved.
package pulumiop

import "context"

type applyFollowsKey struct{}

// WithApplyFollowing marks ctx as a Create's or an Update's that is not a
// preview.
func WithApplyFollowing(ctx context.Context) context.Context {
	return context.WithValue(ctx, applyFollowsKey{}, true)
}

// ApplyFollows reports a plan that the bridge applies at once, shown to
// nobody.
func ApplyFollows(ctx context.Context) bool {
	follows, _ := ctx.Value(applyFollowsKey{}).(bool)
	return follows
}
