package bridge

import (
	"context"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"github.com/k8sconnect/k8sconnect/provider/plugin/pulumiop"
)

// MarkApplies wraps the plugin's server so that the context of a Create or
// an Update that is not a preview says that its plan is applied at once
// (pulumiop). The bridge plans each in the same call before it applies, and
// a resource that knows the plan is shown to nobody may plan less.
func MarkApplies(s pulumirpc.ResourceProviderServer) pulumirpc.ResourceProviderServer {
	return &markApplies{s}
}

type markApplies struct {
	pulumirpc.ResourceProviderServer
}

func (s *markApplies) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if !req.GetPreview() {
		ctx = pulumiop.WithApplyFollowing(ctx)
	}
	return s.ResourceProviderServer.Create(ctx, req)
}

func (s *markApplies) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	if !req.GetPreview() {
		ctx = pulumiop.WithApplyFollowing(ctx)
	}
	return s.ResourceProviderServer.Update(ctx, req)
}
