// Package provider is the terraform-plugin-framework provider for k8sconnect.
// It is the single source of truth for the schema: Terraform and OpenTofu load it
// directly, and the Pulumi bridge in ../bridge wraps the same value.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Address is the registry address Terraform and OpenTofu use for this provider.
const Address = "registry.terraform.io/k8sconnect/k8sconnect"

// TypeName prefixes every resource and data source type ("k8sconnect_object").
const TypeName = "k8sconnect"

type k8sconnectProvider struct {
	version string
}

// New returns a constructor for the provider, as providerserver and the Pulumi
// bridge both expect.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &k8sconnectProvider{version: version} }
}

func (p *k8sconnectProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func (p *k8sconnectProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manage Kubernetes objects with Server-Side Apply. Every resource carries its own " +
			"cluster_connection, so one configuration can create a cluster and the objects in it.",
	}
}

func (p *k8sconnectProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *k8sconnectProvider) Resources(context.Context) []func() resource.Resource {
	return nil
}

func (p *k8sconnectProvider) DataSources(context.Context) []func() datasource.DataSource {
	return nil
}
