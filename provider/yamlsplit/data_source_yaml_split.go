// Package yamlsplit is the k8sconnect_yaml_split data source: multi-document YAML
// in, one manifest per object out, keyed so that for_each over the result
// survives reordering, adding and removing documents.
package yamlsplit

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

var _ datasource.DataSourceWithValidateConfig = (*DataSource)(nil)

// DataSource implements k8sconnect_yaml_split. It needs no cluster.
type DataSource struct{}

// New returns the data source, for the provider's DataSources.
func New() datasource.DataSource { return &DataSource{} }

type model struct {
	Content          types.String `tfsdk:"content"`
	Pattern          types.String `tfsdk:"pattern"`
	KustomizePath    types.String `tfsdk:"kustomize_path"`
	KustomizeOptions types.Object `tfsdk:"kustomize_options"`
	Manifests        types.Map    `tfsdk:"manifests"`
	Sensitive        types.Map    `tfsdk:"sensitive"`
	SensitiveKeys    types.List   `tfsdk:"sensitive_keys"`
}

func (m model) inputs() yamldocs.Inputs {
	return yamldocs.Inputs{Content: m.Content, Pattern: m.Pattern, KustomizePath: m.KustomizePath, KustomizeOptions: m.KustomizeOptions}
}

func (d *DataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_yaml_split"
}

func (d *DataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Splits multi-document YAML (inline, from files matching a glob, or built by kustomize) into " +
			"one manifest per Kubernetes object, for `for_each` over `k8sconnect_object`. Set exactly one of " +
			"content, pattern or kustomize_path. To apply CRDs and Namespaces before what needs them, use " +
			"k8sconnect_yaml_scoped instead.",
		Attributes: yamldocs.InputAttributes(yamldocs.SecretAttributes(map[string]schema.Attribute{
			"manifests": schema.MapAttribute{
				ElementType: types.StringType,
				Computed:    true,
				Description: "Each object as compact JSON (which is YAML too), read as kubectl reads the YAML. " +
					"Plans then show a change to it field by field, where a change to long YAML text is shown " +
					"as a diff of its lines, which for a large CRD takes tens of seconds and gigabytes of memory. Keyed by " +
					"`<group>/<Kind>/<namespace>/<name>`, or " +
					"`<group>/<Kind>/<name>` when the document sets no namespace; `<group>` is `core` for the " +
					"core API group. For example `apps/Deployment/prod/web`, `core/ConfigMap/prod/settings`, " +
					"`core/Namespace/prod`. Keys do not depend on document order or apiVersion, so reordering " +
					"documents plans no change. An object defined twice is an error. Secrets are not here but " +
					"in sensitive.",
			},
		}, "Secrets (core v1)")),
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
	in := config.inputs()
	if in.Unknown() {
		// Terraform itself defers reading until the input is known; this covers
		// callers that read anyway (deferred actions, the Pulumi bridge's preview).
		config.Manifests = types.MapUnknown(types.StringType)
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
	bodies := make(map[string]string, len(manifests))
	for key, m := range manifests {
		bodies[key] = m.Body
	}
	secrets := yamldocs.SecretsApart(bodies)
	config.Sensitive, config.SensitiveKeys = yamldocs.SecretValues(ctx, secrets, &resp.Diagnostics)
	manifestsValue, diags := types.MapValueFrom(ctx, types.StringType, bodies)
	resp.Diagnostics.Append(diags...)
	config.Manifests = manifestsValue
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}
