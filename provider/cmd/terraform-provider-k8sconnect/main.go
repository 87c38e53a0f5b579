// Command terraform-provider-k8sconnect serves the provider to Terraform and OpenTofu.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/k8sconnect/k8sconnect/internal/cpuprofile"
	"github.com/k8sconnect/k8sconnect/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	defer cpuprofile.Start()() // only with K8SCONNECT_CPU_PROFILE set (make bench PROFILE=1)
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.Address,
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
