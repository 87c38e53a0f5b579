// Command pulumi-resource-k8sconnect is the Pulumi resource plugin: the
// framework provider served through pulumi-terraform-bridge, with the schema
// generated at build time embedded.
package main

import (
	"context"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

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
	tfbridge.Main(context.Background(), bridge.Name, bridge.Provider(),
		tfbridge.ProviderMetadata{PackageSchema: schema.PackageSchema})
}
