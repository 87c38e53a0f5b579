// Command terraform-provider-k8sconnect serves the provider to Terraform and OpenTofu.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/provider"
	"github.com/k8sconnect/k8sconnect/provider/plugin/cpuprofile"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
	"github.com/k8sconnect/k8sconnect/provider/plugin/rpccontext"
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
	quietUnlessAsked()
	gcsettings.Tune(gcsettings.TerraformLimit)
	defer cpuprofile.Start()() // only with K8SCONNECT_CPU_PROFILE set (make bench PROFILE=1)
	var opts []tf6server.ServeOpt
	if *debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	framework := providerserver.NewProtocol6(provider.New(version)())
	err := tf6server.Serve(provider.Address, func() tfprotov6.ProviderServer {
		return rpccontext.Release(framework())
	}, opts...)
	if err != nil {
		log.Fatal(err)
	}
}
