// Package helmtemplate is the k8sconnect_helm_template data source: a Helm
// chart rendered with the Helm v4 SDK against the cluster it will run on,
// handed out as the maps k8sconnect_yaml_scoped hands out, so a configuration
// can apply each object with its own k8sconnect_object.
//
// What that loses against a release (hooks run as plain objects, no release
// record for helm to read) is in the description; k8sconnect_helm_release
// keeps both.
package helmtemplate

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/chartinputs"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

var (
	_ datasource.DataSourceWithConfigure = (*DataSource)(nil)
)

// DataSource implements k8sconnect_helm_template.
type DataSource struct {
	clients *connection.Cache
}

// New returns the data source; the provider passes it a client cache in Configure.
func New() datasource.DataSource { return &DataSource{} }

type model struct {
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	chartinputs.Inputs
	ClusterConnection types.Object `tfsdk:"cluster_connection"`

	CRDs            types.Map    `tfsdk:"crds"`
	ClusterScoped   types.Map    `tfsdk:"cluster_scoped"`
	Namespaced      types.Map    `tfsdk:"namespaced"`
	Hooks           types.Map    `tfsdk:"hooks"`
	Sensitive       types.Map    `tfsdk:"sensitive"`
	SensitiveKeys   types.List   `tfsdk:"sensitive_keys"`
	SensitiveFields types.Map    `tfsdk:"sensitive_fields"`
	Notes           types.String `tfsdk:"notes"`
	ChartVersion    types.String `tfsdk:"chart_version"`
	AppVersion      types.String `tfsdk:"app_version"`
	KubeVersion     types.String `tfsdk:"kube_version"`
}

const defaultNamespace = "default"

const keyFormat = "each as compact JSON, keyed by `<group>/<Kind>/<namespace>/<name>`, or `<group>/<Kind>/<name>` " +
	"for a cluster-scoped kind, as in k8sconnect_yaml_scoped. Objects whose template sets no namespace are " +
	"placed in `namespace`, as Helm places them"

func (d *DataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_helm_template"
}

func (d *DataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computedMap := func(description string) schema.Attribute {
		return schema.MapAttribute{ElementType: types.StringType, Computed: true, Description: description}
	}
	computedString := func(description string) schema.Attribute {
		return schema.StringAttribute{Computed: true, Description: description}
	}
	resp.Schema = schema.Schema{
		Description: "Renders a Helm chart with the Helm v4 SDK and hands out its objects as k8sconnect_yaml_scoped " +
			"does, so each can be applied by a k8sconnect_object of its own. With a cluster (cluster_connection, " +
			"or the provider's), templates see the cluster's real `.Capabilities` and `lookup` reads live objects, " +
			"as `helm install --dry-run=server`; without one, they see Helm's defaults and `lookup` finds nothing, " +
			"as `helm template`. Applying the maps with k8sconnect_object loses what only a release has: hooks " +
			"become plain objects applied with the rest (not run in their phase, not deleted by their policy), and " +
			"no release record is written, so `helm list` shows nothing.",
		Attributes: chartinputs.DataSourceAttributes(yamldocs.SecretAttributes(map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true,
				Description: "The release name templates see as `.Release.Name`."},
			"namespace": schema.StringAttribute{Optional: true, Computed: true,
				Description: "The release namespace (`.Release.Namespace`), where objects whose template sets none " +
					"are placed. Defaults to `default`, as helm does."},
			"cluster_connection": connection.DataSourceAttribute(
				"The cluster to render against: its version and APIs for `.Capabilities`, its objects for `lookup`, " +
					"and the scope of custom kinds. Defaults to the provider's; without either, the chart renders as " +
					"`helm template` renders it."),

			"crds": computedMap("CustomResourceDefinitions, from the chart's `crds/` directories and its templates, " +
				keyFormat + "."),
			"cluster_scoped": computedMap("Cluster-scoped objects other than CRDs, " + keyFormat + "."),
			"namespaced":     computedMap("Namespaced objects, " + keyFormat + "."),
			"hooks": computedMap("The chart's hooks (documents annotated `helm.sh/hook`) for install, upgrade, " +
				"rollback and delete, " + keyFormat + ". A key here may also be in another map: a chart may declare " +
				"one object as a hook and as part of the release. `helm test` hooks are left out, as " +
				"`helm install` leaves them."),
			"sensitive_fields": schema.MapAttribute{ElementType: types.ListType{ElemType: types.StringType}, Computed: true,
				Description: "For each key of sensitive whose object holds a value of set_sensitive outside a Secret's " +
					"data, the fields that hold it, for that k8sconnect_object's sensitive_fields: hiding yaml_body " +
					"does not hide the projection, which shows each field."},
			"notes": computedString("The chart's rendered NOTES.txt (its subcharts' too with render_subchart_notes), " +
				"scrubbed of set_sensitive values."),
			"chart_version": computedString("The chart's exact version (a constraint in `version` resolved)."),
			"app_version":   computedString("The chart's appVersion."),
			"kube_version": computedString("The Kubernetes version templates saw as `.Capabilities.KubeVersion`: " +
				"the cluster's, or Helm's default without a cluster."),
		}, "Secrets, and every object that holds a value of set_sensitive (with its sensitive_fields)"),
			map[string]string{"set_sensitive": setSensitiveMore, "postrender": postrenderMore,
				"disable_openapi_validation": disableOpenAPIValidationMore}),
	}
}

const setSensitiveMore = "Every rendered object that holds one of them (as written or base64-encoded) is handed out in " +
	"`sensitive`, not in the plain maps; values shorter than 3 characters are not searched for. A value of 8 " +
	"characters or more in an object's name is an error, since keys are never hidden."

const (
	postrenderMore = "What it returns is what the maps hand out (an object holding a set_sensitive value in " +
		"`sensitive`, as any rendered object), and it runs at every read, so at every plan."
	disableOpenAPIValidationMore = "Without a cluster (no cluster_connection here or in the provider) nothing is " +
		"left out, as `helm template` checks nothing. Unlike k8sconnect_helm_release, which warns once when it first " +
		"leaves a field out, the read does not warn: a data source keeps nothing from one read to the next, so the " +
		"warning would come back at every plan."
)

func (d *DataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		d.clients = data.Clients
	}
}

func (m *model) setUnknown() {
	for _, p := range []*types.Map{&m.CRDs, &m.ClusterScoped, &m.Namespaced, &m.Hooks, &m.Sensitive} {
		*p = types.MapUnknown(types.StringType)
	}
	m.SensitiveKeys = types.ListUnknown(types.StringType)
	m.SensitiveFields = types.MapUnknown(types.ListType{ElemType: types.StringType})
	for _, p := range []*types.String{&m.Notes, &m.ChartVersion, &m.AppVersion, &m.KubeVersion} {
		*p = types.StringUnknown()
	}
	if m.Namespace.IsUnknown() || m.Namespace.IsNull() {
		m.Namespace = types.StringUnknown()
	}
}

func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config model
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !inputsKnown(ctx, config) {
		// Terraform defers the read until the config is known; this covers
		// callers that read anyway (the Pulumi bridge's preview).
		config.setUnknown()
		resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
		return
	}
	if config.Namespace.IsNull() {
		config.Namespace = types.StringValue(defaultNamespace)
	}

	vals := config.ChartValues(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	cluster, finder, ok := d.cluster(ctx, config, &resp.Diagnostics)
	if !ok {
		return
	}
	pr := config.PostRenderer(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	res, failure := helmchart.LoadAndRender(ctx, helmchart.Request{Source: config.Source(), Values: vals,
		Release: helmchart.Release{Name: config.Name.ValueString(), Namespace: config.Namespace.ValueString()},
		Cluster: cluster, Finder: finder, PostRenderer: pr, DisableOpenAPIValidation: config.DisableOpenapiValidation.ValueBool()})
	if res.Rendered != nil && cluster == nil && res.Chart.UsesLookup() {
		resp.Diagnostics.AddWarning("Chart rendered without a cluster",
			"The chart's templates call `lookup`, which finds nothing without a cluster, so values they would read "+
				"back (a generated password, say) are generated anew at every read and every plan shows a change. "+
				"Set cluster_connection here or in the provider block.")
	}
	if failure != nil {
		addFailure(&resp.Diagnostics, vals, failure)
		return
	}

	out, err := sensitiveApart(res.Sorted, vals.SensitiveTexts())
	if err != nil {
		for _, e := range yamldocs.Errors(err) {
			resp.Diagnostics.AddError(helmchart.InvalidChartOutput, vals.Scrub(e.Error()))
		}
		return
	}
	config.CRDs = stringMap(out.crds)
	config.ClusterScoped = stringMap(out.clusterScoped)
	config.Namespaced = stringMap(out.namespaced)
	config.Hooks = stringMap(out.hooks)
	config.Sensitive, config.SensitiveKeys = yamldocs.SecretValues(ctx, out.sensitive, &resp.Diagnostics)
	fields, diags := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, out.sensitiveFields)
	resp.Diagnostics.Append(diags...)
	config.SensitiveFields = fields
	config.Notes = types.StringValue(vals.Scrub(res.Rendered.NotesWith(config.RenderSubchartNotes.ValueBool())))
	config.ChartVersion = types.StringValue(res.Chart.Version)
	config.AppVersion = types.StringValue(res.Chart.Metadata.AppVersion)
	config.KubeVersion = types.StringValue(res.Rendered.Capabilities.KubeVersion.Version)
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}

// addFailure reports a step of rendering that failed, in this data source's
// words.
func addFailure(diags *diag.Diagnostics, vals helmchart.Values, f *helmchart.Failure) {
	switch f.Title {
	case helmchart.InvalidValues:
		diags.AddError(f.Title, f.Err.Error())
	case helmchart.ChartNotLoaded:
		diags.AddAttributeError(path.Root("chart"), f.Title, f.Err.Error())
	case helmchart.InvalidChartOutput:
		for _, e := range yamldocs.Errors(f.Err) {
			diags.AddError(f.Title, vals.Scrub(e.Error()))
		}
	default:
		diags.AddError(f.Title, vals.Scrub(f.Err.Error()))
	}
}

func inputsKnown(ctx context.Context, m model) bool {
	if m.Name.IsUnknown() || m.Namespace.IsUnknown() || m.ClusterConnection.IsUnknown() || !m.Inputs.Known() {
		return false
	}
	_, known, _ := connection.FromObject(ctx, m.ClusterConnection)
	return m.ClusterConnection.IsNull() || known
}

// cluster is the cluster to render against: the data source's connection,
// else the provider's, else none (nil, nil, true).
func (d *DataSource) cluster(ctx context.Context, m model, diags *diag.Diagnostics) (*helmchart.Cluster, yamldocs.ScopeFinder, bool) {
	if d.clients == nil {
		diags.AddError("Provider not configured", "k8sconnect_helm_template was read before the provider was configured.")
		return nil, nil, false
	}
	conn, _, dd := connection.FromObject(ctx, m.ClusterConnection)
	diags.Append(dd...)
	if diags.HasError() {
		return nil, nil, false
	}
	c, err := d.clients.Client(ctx, conn)
	if errors.Is(err, connection.ErrNoConnection) {
		return nil, nil, true
	}
	if err != nil {
		connection.ReportClientError(diags, err)
		return nil, nil, false
	}
	return &helmchart.Cluster{Config: c.Config, Discovery: c.Discovery}, c, true
}

func stringMap(m map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}
