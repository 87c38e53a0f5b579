package bridge

import (
	"context"
	"fmt"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf"
	shim "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfshim"

	"github.com/k8sconnect/k8sconnect/provider/plugin/rpccontext"
)

// releasingContexts serves the framework provider through rpccontext.Release,
// as the Terraform plugin does: the framework keeps every request's context
// until StopProvider, which a Pulumi run that is not interrupted never sends,
// so the plugin's memory grew with every object (142 MiB for 200 in make
// bench). The bridge builds the framework's server itself, from Server of the
// shim in ProviderInfo.P; this shim wraps what that returns.
//
// The bridge also asks ProviderInfo.P for optional methods by type assertion;
// a wrapper has only the methods it declares, so it forwards those of the
// wrapped shim that this bridge version asks for (FrameworkProvider for its
// schema checks, ResourceSchemaFixupsMayBePrecomputed for token mapping,
// ListResourcesMap for list resources).
// TestReleasingShimKeepsTheBridgesMethods fails when the two method sets
// differ after a bridge upgrade.
type releasingContexts struct{ pf.ShimProvider }

// releasing serves p through rpccontext.Release; p is what the bridge's
// ShimProvider returns.
func releasing(p shim.Provider) shim.Provider {
	inner, ok := p.(pf.ShimProvider)
	if !ok {
		panic(fmt.Sprintf("bridge: %T is not a Plugin Framework shim", p))
	}
	return releasingContexts{inner}
}

func (s releasingContexts) Server(ctx context.Context) (tfprotov6.ProviderServer, error) {
	server, err := s.ShimProvider.Server(ctx)
	if err != nil {
		return nil, err
	}
	return rpccontext.Release(server), nil
}

func (s releasingContexts) FrameworkProvider() fwprovider.Provider {
	if inner, ok := s.ShimProvider.(interface{ FrameworkProvider() fwprovider.Provider }); ok {
		return inner.FrameworkProvider()
	}
	return nil
}

func (s releasingContexts) ResourceSchemaFixupsMayBePrecomputed(tfToken string) bool {
	inner, ok := s.ShimProvider.(interface{ ResourceSchemaFixupsMayBePrecomputed(string) bool })
	return ok && inner.ResourceSchemaFixupsMayBePrecomputed(tfToken)
}

func (s releasingContexts) ListResourcesMap() shim.ResourceMap {
	if inner, ok := s.ShimProvider.(interface{ ListResourcesMap() shim.ResourceMap }); ok {
		return inner.ListResourcesMap()
	}
	return nil
}
