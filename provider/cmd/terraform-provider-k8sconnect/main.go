// Command terraform-provider-k8sconnect serves the provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/provider"
)

// version, when set at build time with -ldflags "-X main.version=X.Y.Z" (as
// `make build` and `make release` do), is the version the provider reports;
// unset, it is the repository's VERSION file.
var version string

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	if version == "" {
		version = k8sconnect.Version
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
