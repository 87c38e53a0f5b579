// Command pulumi-tfgen-k8sconnect is the bridge's build-time generator:
// `pulumi-tfgen-k8sconnect schema --out schema` writes schema.json and
// bridge-metadata.json. Its language subcommands shell out to
// `pulumi package gen-sdk`, which needs language hosts this project does not
// have, so the SDKs come from ../k8sconnect-sdkgen instead (which also writes
// the schema, through the same bridge code).
package main

import (
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfgen"

	"github.com/k8sconnect/k8sconnect/bridge"
)

func main() {
	tfgen.Main(bridge.Name, bridge.Provider())
}
