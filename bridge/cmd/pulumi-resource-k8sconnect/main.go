// Command pulumi-resource-k8sconnect is the Pulumi resource plugin: the
// framework provider served through pulumi-terraform-bridge, with the schema
// generated at build time embedded.
package main

import (
	"context"
	"os"
	"strings"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	rprovider "github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/provider/plugin/cpuprofile"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
	"github.com/k8sconnect/k8sconnect/schema"
)

// version, when set with -ldflags "-X main.version=X.Y.Z" (as `make build`
// and `make release` do for both providers), overrides bridge.Version (the
// VERSION file). The SDKs ask the engine for the version they were generated
// with (k8sconnect-sdkgen -version).
var version string

func main() {
	gcsettings.Tune(gcsettings.PulumiLimit)
	defer cpuprofile.Start()() // only with K8SCONNECT_CPU_PROFILE set (make bench PROFILE=1)
	if version != "" {
		bridge.Version = version
	}
	ctx := context.Background()
	meta := tfbridge.ProviderMetadata{PackageSchema: schema.PackageSchema}
	if answersFlag(os.Args[1:]) {
		// -version and -get-provider-info: the bridge answers and exits.
		tfbridge.Main(ctx, bridge.Name, bridge.Provider(), meta)
		return
	}
	// Served as tfbridge.Main serves it, with customTimeouts honoured and
	// an update's plan known to be applied at once (bridge.Operations).
	err := rprovider.Main(bridge.Name, func(host *rprovider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		s, err := tfbridge.NewProviderServer(ctx, host, bridge.Provider(), meta)
		if err != nil {
			return nil, err
		}
		return bridge.Operations(s), nil
	})
	if err != nil {
		cmdutil.ExitError(err.Error())
	}
}

// answersFlag reports a flag that the bridge answers without serving.
func answersFlag(args []string) bool {
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "version", "get-provider-info", "help", "h":
			return true
		}
	}
	return false
}
