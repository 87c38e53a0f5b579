// Package yamlscoped is the k8sconnect_yaml_scoped data source: the manifests of
// k8sconnect_yaml_split, sorted into CRDs, cluster-scoped and namespaced objects
// so a configuration can apply each group after the one it needs.
package yamlscoped

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

var (
	_ datasource.DataSourceWithConfigure      = (*DataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*DataSource)(nil)
)

// DataSource implements k8sconnect_yaml_scoped.
type DataSource struct {
	clients *connection.Cache
}

// New returns the data source; the provider passes it a client cache in Configure.
func New() datasource.DataSource { return &DataSource{} }

type model struct {
	Content           types.String `tfsdk:"content"`
	Pattern           types.String `tfsdk:"pattern"`
	KustomizePath     types.String `tfsdk:"kustomize_path"`
	KustomizeOptions  types.Object `tfsdk:"kustomize_options"`
	ClusterConnection types.Object `tfsdk:"cluster_connection"`
	CRDs              types.Map    `tfsdk:"crds"`
	ClusterScoped     types.Map    `tfsdk:"cluster_scoped"`
	Namespaced        types.Map    `tfsdk:"namespaced"`
	Sensitive         types.Map    `tfsdk:"sensitive"`
	SensitiveKeys     types.List   `tfsdk:"sensitive_keys"`
}

func (m model) inputs() yamldocs.Inputs {
	return yamldocs.Inputs{Content: m.Content, Pattern: m.Pattern, KustomizePath: m.KustomizePath, KustomizeOptions: m.KustomizeOptions}
}

const keyFormat = "each as compact JSON, keyed by `<group>/<Kind>/<namespace>/<name>`, or `<group>/<Kind>/<name>` " +
	"when the document sets no namespace (`<group>` is `core` for the core API group), as in k8sconnect_yaml_split"

func (d *DataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_yaml_scoped"
}

func (d *DataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Splits multi-document YAML like k8sconnect_yaml_split and sorts the objects by scope, so " +
			"CRDs can be applied first, then cluster-scoped objects such as Namespaces, then namespaced " +
			"objects (chain the three `for_each` resources with `depends_on`). A kind's scope comes from a " +
			"CustomResourceDefinition for it in the same input, else from the cluster when cluster_connection " +
			"is set, else from a built-in table of Kubernetes kinds; a kind none of them knows is an error.",
		Attributes: yamldocs.InputAttributes(yamldocs.SecretAttributes(map[string]schema.Attribute{
			"cluster_connection": connection.DataSourceAttribute(
				"Optional. The cluster whose API discovery tells the scope of kinds that are neither built into " +
					"Kubernetes nor defined by a CRD in the input."),
			"crds": schema.MapAttribute{
				ElementType: types.StringType, Computed: true,
				Description: "CustomResourceDefinitions, " + keyFormat + ".",
			},
			"cluster_scoped": schema.MapAttribute{
				ElementType: types.StringType, Computed: true,
				Description: "Cluster-scoped objects other than CRDs (Namespaces, ClusterRoles, cluster-scoped " +
					"custom resources), " + keyFormat + ".",
			},
			"namespaced": schema.MapAttribute{
				ElementType: types.StringType, Computed: true,
				Description: "Namespaced objects other than Secrets, " + keyFormat + ".",
			},
		}, "Secrets (core v1; namespaced, so apply them with the namespaced objects)")),
	}
}

func (d *DataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		d.clients = data.Clients
	}
}

func (d *DataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var config model
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	config.inputs().Validate(&resp.Diagnostics)
}

func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config model
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	conn, connKnown, diags := connection.FromObject(ctx, config.ClusterConnection)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	in := config.inputs()
	if in.Unknown() || (!config.ClusterConnection.IsNull() && !connKnown) {
		// Terraform itself defers reading until the config is known (as for a
		// cluster created in the same apply); this covers callers that read
		// anyway (deferred actions, the Pulumi bridge's preview).
		config.CRDs = types.MapUnknown(types.StringType)
		config.ClusterScoped = types.MapUnknown(types.StringType)
		config.Namespaced = types.MapUnknown(types.StringType)
		config.Sensitive = types.MapUnknown(types.StringType)
		config.SensitiveKeys = types.ListUnknown(types.StringType)
		resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
		return
	}

	docs, p, ok := in.Load(ctx, &resp.Diagnostics)
	if !ok {
		return
	}
	manifests, err := yamldocs.Split(docs)
	if err != nil {
		yamldocs.AddErrors(&resp.Diagnostics, p, "Invalid manifest", err)
		return
	}

	var finder yamldocs.ScopeFinder
	if !config.ClusterConnection.IsNull() {
		if d.clients == nil {
			resp.Diagnostics.AddError("Provider not configured", "k8sconnect_yaml_scoped was read before the provider was configured.")
			return
		}
		c, err := d.clients.Client(ctx, conn)
		if err != nil {
			connection.ReportClientError(&resp.Diagnostics, err)
			return
		}
		finder = c
	}
	scoped, err := yamldocs.Classify(manifests, finder)
	if err != nil {
		yamldocs.AddErrors(&resp.Diagnostics, p, "Unknown scope", err)
		return
	}
	secrets := yamldocs.SecretsApart(scoped.CRDs, scoped.ClusterScoped, scoped.Namespaced)
	config.Sensitive, config.SensitiveKeys = yamldocs.SecretValues(ctx, secrets, &resp.Diagnostics)
	config.CRDs = stringMap(scoped.CRDs)
	config.ClusterScoped = stringMap(scoped.ClusterScoped)
	config.Namespaced = stringMap(scoped.Namespaced)
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}

func stringMap(m map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}
