// Command k8sconnect-go is the k8sconnect quickstart for Pulumi in Go: a
// namespace and a ConfigMap in it, applied with Server-Side Apply. The program
// is in package quickstart so that it can also run as an Automation API inline
// program.
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/k8sconnect/k8sconnect/examples/pulumi-go/quickstart"
)

func main() {
	pulumi.Run(quickstart.Program)
}
