package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/helmrelease"
	"github.com/k8sconnect/k8sconnect/provider/helmtemplate"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/dynamicvalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/pulumihost"
	"github.com/k8sconnect/k8sconnect/provider/manifestset"
	"github.com/k8sconnect/k8sconnect/provider/object"
	"github.com/k8sconnect/k8sconnect/provider/objectdata"
	"github.com/k8sconnect/k8sconnect/provider/patch"
	"github.com/k8sconnect/k8sconnect/provider/wait"
	"github.com/k8sconnect/k8sconnect/provider/yamlscoped"
	"github.com/k8sconnect/k8sconnect/provider/yamlsplit"
)

// Address is the registry address Terraform and OpenTofu use for this provider.
const Address = "registry.terraform.io/k8sconnect/k8sconnect"

// TypeName prefixes every resource and data source type ("k8sconnect_object").
const TypeName = "k8sconnect"

type k8sconnectProvider struct {
	version string
	clients *connection.Cache
	numbers dynamicvalue.Options
	pulumi  *pulumihost.Host // nil under Terraform and OpenTofu
	phase   providerdata.Phase
}

type providerModel struct {
	OwnershipMessages types.String `tfsdk:"ownership_messages"`
	ClusterConnection types.Object `tfsdk:"cluster_connection"`
}

// New returns a constructor for the provider, as providerserver and the Pulumi
// bridge both expect.
func New(version string) func() fwprovider.Provider {
	return func() fwprovider.Provider {
		return &k8sconnectProvider{version: version, clients: connection.NewCache()}
	}
}

// PulumiOptions is what the Pulumi bridge tells the provider about the engine
// (see package pulumihost).
type PulumiOptions = pulumihost.Options

// NewForPulumi is New for the Pulumi bridge. Pulumi holds numbers as float64,
// so dynamic outputs read from the cluster (a wait's status, the object data
// source's object) carry integers beyond ±(2^53-1) as strings of their digits
// instead of rounding them (dynamicvalue.Options); and every resource and
// data source speaks Pulumi's terms (pulumihost).
func NewForPulumi(version string, opts PulumiOptions) func() fwprovider.Provider {
	return func() fwprovider.Provider {
		return &k8sconnectProvider{version: version, clients: connection.NewCache(),
			numbers: dynamicvalue.Options{UnsafeIntegersAsStrings: true}, pulumi: pulumihost.New(opts)}
	}
}

func (p *k8sconnectProvider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func (p *k8sconnectProvider) Schema(_ context.Context, _ fwprovider.SchemaRequest, resp *fwprovider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manage Kubernetes objects with Server-Side Apply. A resource may carry its own " +
			"cluster_connection, so one configuration can create a cluster and the objects in it; resources " +
			"without one use the provider's.",
		Attributes: map[string]schema.Attribute{
			"cluster_connection": connection.ProviderAttribute("The default connection of every resource and data " +
				"source without its own cluster_connection. Provider configuration is not stored in state: " +
				"credentials given here never reach it, and a rotated credential changes no plan. Prefer " +
				"kubeconfig_file or exec to inline credentials."),
			"ownership_messages": schema.StringAttribute{
				Description: "How plans explain field ownership changes: \"conflicts\" (default) warns when " +
					"another manager is changing fields this configuration asserts; \"full\" also notes fields " +
					"being taken or released; \"none\" says nothing.",
				Optional: true,
			},
		},
	}
}

// Configure hands every resource the same client cache, so objects that share a
// cluster share one client and one discovery cache for the whole run.
func (p *k8sconnectProvider) Configure(ctx context.Context, req fwprovider.ConfigureRequest, resp *fwprovider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	verbosity, err := ownership.ParseVerbosity(cfg.OwnershipMessages.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("ownership_messages"), "Invalid ownership_messages", err.Error())
		return
	}
	resp.Diagnostics.Append(p.clients.SetDefault(ctx, cfg.ClusterConnection)...)
	data := &providerdata.Data{Clients: p.clients, OwnershipMessages: verbosity, Numbers: p.numbers, Status: p.pulumi.Status, Phase: &p.phase,
		PlansRepeat: p.pulumi != nil, Version: p.version}
	resp.ResourceData, resp.DataSourceData = data, data
}

func (p *k8sconnectProvider) Resources(context.Context) []func() resource.Resource {
	all := []func() resource.Resource{object.New, patch.New, wait.New, helmrelease.New, manifestset.New}
	if p.pulumi == nil {
		return all
	}
	for i, newResource := range all {
		all[i] = func() resource.Resource { return p.pulumi.Resource(newResource()) }
	}
	return all
}

func (p *k8sconnectProvider) DataSources(context.Context) []func() datasource.DataSource {
	all := []func() datasource.DataSource{objectdata.New, yamlsplit.New, yamlscoped.New, helmtemplate.New}
	if p.pulumi == nil {
		return all
	}
	for i, newDataSource := range all {
		all[i] = func() datasource.DataSource { return p.pulumi.DataSource(newDataSource()) }
	}
	return all
}
