// Package objectdata is the k8sconnect_object data source: read any object that
// someone else created, as YAML, JSON and a structured value.
package objectdata

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/dynamicvalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// redacted replaces Secret values in the outputs that are not sensitive.
const redacted = "(sensitive: see secret_data)"

// redactedField replaces a sensitive_fields value in those outputs.
const redactedField = "(sensitive: see sensitive_values)"

// DataSource implements the k8sconnect_object data source.
type DataSource struct {
	clients *connection.Cache
	numbers dynamicvalue.Options
}

// New returns the data source.
func New() datasource.DataSource { return &DataSource{} }

type model struct {
	APIVersion        types.String  `tfsdk:"api_version"`
	Kind              types.String  `tfsdk:"kind"`
	Name              types.String  `tfsdk:"name"`
	Namespace         types.String  `tfsdk:"namespace"`
	ClusterConnection types.Object  `tfsdk:"cluster_connection"`
	YAMLBody          types.String  `tfsdk:"yaml_body"`
	JSON              types.String  `tfsdk:"json"`
	Object            types.Dynamic `tfsdk:"object"`
	SecretData        types.Map     `tfsdk:"secret_data"`
	SensitiveFields   types.List    `tfsdk:"sensitive_fields"`
	SensitiveValues   types.Map     `tfsdk:"sensitive_values"`
}

func (d *DataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object"
}

func (d *DataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	conn := connection.DataSourceAttribute("How to reach the cluster." + connection.DefaultNote)
	resp.Schema = schema.Schema{
		Description: "Reads one object from the cluster. For a Secret, the values of data and stringData are " +
			"redacted in yaml_body, json and object (so is kubectl's last-applied-configuration annotation, which " +
			"copies them) and given, decoded, only in the sensitive secret_data.",
		Attributes: map[string]schema.Attribute{
			"api_version":        schema.StringAttribute{Required: true, Description: "apiVersion, e.g. apps/v1."},
			"kind":               schema.StringAttribute{Required: true, Description: "Kind, e.g. Deployment."},
			"name":               schema.StringAttribute{Required: true, Description: "Name."},
			"namespace":          schema.StringAttribute{Optional: true, Computed: true, Description: "Namespace; defaults to \"default\" for namespaced kinds."},
			"cluster_connection": conn,
			"yaml_body":          schema.StringAttribute{Computed: true, Description: "The object as YAML, without managedFields."},
			"json":               schema.StringAttribute{Computed: true, Description: "The object as JSON, without managedFields."},
			"object":             schema.DynamicAttribute{Computed: true, Description: "The object as a structured value, e.g. .object.spec.replicas."},
			"secret_data": schema.MapAttribute{
				Computed: true, Sensitive: true, ElementType: types.StringType,
				Description: "For a Secret: its data (decoded) and stringData, by key. Null for other kinds.",
			},
			"sensitive_fields": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				Description: "Fields whose values are secret, for kinds other than Secret that carry credentials (a " +
					"CRD's `spec.password`, say), in the path language of k8sconnect_object's ignore_fields. Each " +
					"value is replaced in yaml_body, json and object (and kubectl's last-applied-configuration " +
					"annotation, which copies it, is redacted) and given only in the sensitive sensitive_values.",
			},
			"sensitive_values": schema.MapAttribute{
				Computed: true, Sensitive: true, ElementType: types.StringType,
				Description: "The values of sensitive_fields, by path as written there (a path with [*] gives one " +
					"entry per element, by index): strings as they are, other values as JSON. A path the object does " +
					"not hold is left out.",
			},
		},
	}
}

func (d *DataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		d.clients, d.numbers = data.Clients, data.Numbers
	}
}

func (d *DataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m model
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	conn, known, diags := connection.FromObject(ctx, m.ClusterConnection)
	resp.Diagnostics.Append(diags...)
	if !known {
		connection.ReportUnknownConnection(&resp.Diagnostics, "cluster_connection must be known to read an object.")
		return
	}
	c, err := d.clients.Client(ctx, conn)
	if err != nil {
		connection.ReportClientError(&resp.Diagnostics, err)
		return
	}
	id := manifest.Identity{APIVersion: m.APIVersion.ValueString(), Kind: m.Kind.ValueString(), Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString()}
	mapping, err := c.Mapping(id.GVK())
	if missing := c.MissingCoreKind(id.GVK()); missing != nil {
		err = missing
	}
	if err != nil {
		// "Unknown kind" only when discovery answered without it; a
		// discovery that failed (an outage, a proxy in the server's place)
		// is no verdict on the kind.
		summary, detail := connection.KindSummary(err), fmt.Sprintf("Looking up the kind of %s: %s", id, connection.Explain(err))
		if summary != connection.DiscoveryFailed {
			detail = fmt.Sprintf("The cluster does not serve %s %s, so %s cannot be read: %s", id.APIVersion, id.Kind, id,
				connection.Explain(err))
		}
		resp.Diagnostics.AddError(summary, detail)
		return
	}
	id.Namespace = scope.Namespace(mapping, id.Namespace)
	obj, err := c.Get(ctx, id.GVK(), id.Namespace, id.Name)
	if apierrors.IsNotFound(err) {
		resp.Diagnostics.AddError("Object not found", fmt.Sprintf("%s does not exist in the cluster.", id))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Read failed", fmt.Sprintf("Reading %s: %s", id, connection.Explain(err)))
		return
	}
	obj.SetManagedFields(nil)
	fields, ok := sensitivePaths(ctx, m.SensitiveFields, &resp.Diagnostics)
	if !ok {
		return
	}
	values := splitFields(obj, fields)
	secret, err := splitSecret(obj)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the Secret", err.Error())
		return
	}
	y, err := yaml.Marshal(obj.Object)
	if err != nil {
		resp.Diagnostics.AddError("Cannot render the object", err.Error())
		return
	}
	j, _ := json.Marshal(obj.Object)
	dyn, err := d.numbers.FromUnstructured(obj.Object)
	if err != nil {
		resp.Diagnostics.AddError("Cannot render the object", err.Error())
		return
	}
	m.Namespace = types.StringValue(obj.GetNamespace())
	m.YAMLBody, m.JSON, m.Object = types.StringValue(string(y)), types.StringValue(string(j)), types.DynamicValue(dyn)
	m.SensitiveValues = types.MapNull(types.StringType)
	if values != nil {
		sv, diags := types.MapValueFrom(ctx, types.StringType, values)
		resp.Diagnostics.Append(diags...)
		m.SensitiveValues = sv
	}
	m.SecretData = types.MapNull(types.StringType)
	if secret != nil {
		sd, diags := types.MapValueFrom(ctx, types.StringType, secret)
		resp.Diagnostics.Append(diags...)
		m.SecretData = sd
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ValidateConfig reports an unreadable sensitive_fields entry at plan time.
func (d *DataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m model
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if !resp.Diagnostics.HasError() {
		sensitivePaths(ctx, m.SensitiveFields, &resp.Diagnostics)
	}
}

// sensitivePaths parses sensitive_fields; ok is false after an error or while
// an entry is unknown.
func sensitivePaths(ctx context.Context, list types.List, diags *diag.Diagnostics) ([]writtenPath, bool) {
	if list.IsNull() || list.IsUnknown() {
		return nil, !list.IsUnknown()
	}
	var raw []types.String
	diags.Append(list.ElementsAs(ctx, &raw, false)...)
	var out []writtenPath
	for i, s := range raw {
		if s.IsUnknown() {
			return nil, false
		}
		p, err := objectpath.Parse(s.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("sensitive_fields").AtListIndex(i), "Invalid sensitive_fields entry", err.Error())
			continue
		}
		out = append(out, writtenPath{s.ValueString(), p})
	}
	return out, !diags.HasError()
}

// writtenPath is a sensitive_fields entry: as the user wrote it, and parsed.
type writtenPath struct {
	written string
	path    objectpath.Path
}

// splitFields takes the values at paths out of obj (leaving a marker in their
// place) and returns them by path as the user wrote it; nil when paths is
// empty. kubectl's last-applied-configuration copies every value, so it is
// redacted whenever a value was taken.
func splitFields(obj *unstructured.Unstructured, paths []writtenPath) map[string]string {
	if len(paths) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, p := range paths {
		if !p.path.Selects() {
			if v, ok := p.path.Get(obj.Object); ok {
				out[p.written] = objectpath.Render(v)
				p.path.Replace(obj.Object, redactedField)
			}
			continue
		}
		// [*]: each element's value, by its concrete path.
		for _, e := range p.path.Expand(obj.Object) {
			if v, ok := e.Get(obj.Object); ok {
				out[e.String()] = objectpath.Render(v)
				e.Replace(obj.Object, redactedField)
			}
		}
	}
	if a := obj.GetAnnotations(); len(out) > 0 && a[sensitive.LastAppliedAnnotation] != "" {
		a[sensitive.LastAppliedAnnotation] = redactedField
		obj.SetAnnotations(a)
	}
	return out
}

// splitSecret takes a core Secret's values out of obj (leaving a marker in
// their place) and returns them decoded; nil for other kinds.
func splitSecret(obj *unstructured.Unstructured) (map[string]string, error) {
	if !sensitive.IsSecret(obj.GetAPIVersion(), obj.GetKind()) {
		return nil, nil
	}
	// kubectl apply keeps a full copy of what it applied, values included.
	if a := obj.GetAnnotations(); a[sensitive.LastAppliedAnnotation] != "" {
		a[sensitive.LastAppliedAnnotation] = redacted
		obj.SetAnnotations(a)
	}
	out := map[string]string{}
	data, _, _ := unstructured.NestedMap(obj.Object, "data")
	for _, k := range sortedKeys(data) {
		raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(data[k]))
		if err != nil {
			return nil, fmt.Errorf("data.%s is not base64", k)
		}
		out[k] = string(raw)
		data[k] = redacted
	}
	if len(data) > 0 {
		_ = unstructured.SetNestedMap(obj.Object, data, "data")
	}
	stringData, _, _ := unstructured.NestedMap(obj.Object, "stringData")
	for _, k := range sortedKeys(stringData) {
		out[k] = fmt.Sprint(stringData[k])
		stringData[k] = redacted
	}
	if len(stringData) > 0 {
		_ = unstructured.SetNestedMap(obj.Object, stringData, "stringData")
	}
	return out, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
