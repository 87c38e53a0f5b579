// Command pulumi-resource-k8sconnect is the Pulumi resource plugin: the
// framework provider served through pulumi-terraform-bridge, with the schema
// generated at build time embedded.
package main

import (
	"context"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/schema"
)

func main() {
	tfbridge.Main(context.Background(), bridge.Name, bridge.Provider(),
		tfbridge.ProviderMetadata{PackageSchema: schema.PackageSchema})
}
