// Package chartinputs holds the arguments k8sconnect_helm_template and
// k8sconnect_helm_release share, where the chart is and what values it is
// rendered with, so the two read them, describe them and check them the same
// way.
package chartinputs

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// Inputs are the shared arguments, embedded in each model.
type Inputs struct {
	Chart              types.String `tfsdk:"chart"`
	Repository         types.String `tfsdk:"repository"`
	Version            types.String `tfsdk:"version"`
	Devel              types.Bool   `tfsdk:"devel"`
	RepositoryUsername types.String `tfsdk:"repository_username"`
	RepositoryPassword types.String `tfsdk:"repository_password"`
	RepositoryCAFile   types.String `tfsdk:"repository_ca_file"`
	RepositoryCertFile types.String `tfsdk:"repository_cert_file"`
	RepositoryKeyFile  types.String `tfsdk:"repository_key_file"`
	PassCredentials    types.Bool   `tfsdk:"pass_credentials"`
	PlainHTTP          types.Bool   `tfsdk:"plain_http"`
	Verify             types.Bool   `tfsdk:"verify"`
	Keyring            types.String `tfsdk:"keyring"`
	// DependencyRepositories is a list of objects (repositoryAttributes),
	// not a slice of structs: a list known only at apply (built from
	// another resource's output) must not fail the plan's decoding.
	DependencyRepositories types.List    `tfsdk:"dependency_repositories"`
	Values                 types.List    `tfsdk:"values"`
	Set                    []Setting     `tfsdk:"set"`
	SetList                []ListSetting `tfsdk:"set_list"`
	SetSensitive           []Setting     `tfsdk:"set_sensitive"`
	RenderSubchartNotes    types.Bool    `tfsdk:"render_subchart_notes"`
	DependencyUpdate       types.Bool    `tfsdk:"dependency_update"`
	// DisableOpenapiValidation is disable_openapi_validation.
	DisableOpenapiValidation types.Bool `tfsdk:"disable_openapi_validation"`
	// Postrender is an object (postrenderModel), known or not as a whole
	// and field by field (PostRenderer).
	Postrender types.Object `tfsdk:"postrender"`
}

// ListSetting is one entry of set_list. Value is a list of strings, not a
// slice, so that a list known only at apply does not fail the plan's decoding.
type ListSetting struct {
	Name  types.String `tfsdk:"name"`
	Value types.List   `tfsdk:"value"`
}

// Setting is one entry of set or set_sensitive.
type Setting struct {
	Name  types.String `tfsdk:"name"`
	Value types.String `tfsdk:"value"`
	Type  types.String `tfsdk:"type"`
}

type kind int

const (
	text kind = iota
	flag
	texts
	settings
	lists
	repositories
	program
)

// argument is one shared argument; both schemas are made from this table.
type argument struct {
	name        string
	kind        kind
	required    bool
	sensitive   bool
	description string
}

var arguments = []argument{
	{name: "chart", kind: text, required: true,
		description: "A chart directory or packaged `.tgz`; the `https://` (or `http://`) URL of a packaged `.tgz`, " +
			"with no `repository`, as `helm install NAME URL` takes one; a chart name in `repository`; or an `oci://` " +
			"reference. Each plan asks a URL's server whether its archive changed (a republished archive is the plan's " +
			"upgrade), and the apply installs the copy its plan loaded."},
	{name: "repository", kind: text,
		description: "An HTTP(S) chart repository URL, or an `oci://` registry path the chart name is appended to."},
	{name: "version", kind: text,
		description: "An exact chart version or a semver constraint (`~1.4`, `>=2.0.0 <3`); the latest stable " +
			"version when empty. Ignored for a local chart, which is taken as it is; a chart URL's archive must match it."},
	{name: "devel", kind: flag, description: "Let an empty `version` or a constraint pick pre-release versions."},
	{name: "repository_username", kind: text, description: "User name for the repository, registry or chart URL."},
	{name: "repository_password", kind: text, sensitive: true, description: "Password or token for the repository, registry or chart URL."},
	{name: "repository_ca_file", kind: text, description: "PEM file of the CA that signs the repository's (or chart URL's) certificate."},
	{name: "repository_cert_file", kind: text, description: "PEM client certificate for the repository or chart URL."},
	{name: "repository_key_file", kind: text, description: "PEM key of repository_cert_file."},
	{name: "pass_credentials", kind: flag,
		description: "Send repository_username and repository_password to every host the repository's index " +
			"or its redirects (or a chart URL's redirects) lead to, not only to the repository's own, as " +
			"`helm --pass-credentials`."},
	{name: "plain_http", kind: flag,
		description: "Speak plain HTTP, not HTTPS, to the `oci://` registry (and to the `oci://` registries of a " +
			"local chart's dependencies), as `helm --plain-http`: for a registry without TLS, such as one on the " +
			"local machine. repository_username and repository_password then cross the network unencrypted. " +
			"Refused for an HTTP repository or chart URL, which says `http://` itself."},
	{name: "verify", kind: flag,
		description: "Verify the chart before it is rendered, as `helm install --verify`: its packaged archive must match " +
			"its provenance file (`.prov`, which `helm package --sign` writes), signed by a key in `keyring`, or the plan " +
			"fails. The provenance file is the archive's URL with `.prov` appended for an HTTP repository or chart URL " +
			"(fetched with the archive's credentials and TLS settings), the provenance layer `helm push` stores beside the " +
			"chart in an `oci://` registry, or the `.prov` beside a local `.tgz`; a chart directory cannot be verified. " +
			"The chart is verified every time it is loaded, from the cache too. Its dependencies (subcharts) are not " +
			"verified: helm does not verify them either."},
	{name: "keyring", kind: text,
		description: "The public keyring `verify` checks the signature with: a GnuPG `pubring.gpg` or `pubring.kbx`, or " +
			"keys exported with `gpg --export` (binary or armored). Defaults to helm's: `~/.gnupg/pubring.gpg` (in " +
			"`$GNUPGHOME` when set; `pubring.kbx` where only that exists) of the user running the plan. A leading `~` is " +
			"that user's home directory. Unused unless `verify` is true."},
	{name: "dependency_repositories", kind: repositories,
		description: "Credentials and TLS files for the HTTP(S) repositories and `oci://` registries the chart's dependencies " +
			"come from, when k8sconnect fetches those missing from its `charts/` directory as `helm dependency build` would " +
			"(helm takes them from `helm repo add` and `helm registry login`, which k8sconnect does not read). An entry covers " +
			"a dependency whose `repository` in Chart.yaml is its `url` or under it: the same scheme, host and port (a port " +
			"left out is the one the request goes to: 443 for `https://` and `oci://`, 80 for `http://` and for `oci://` " +
			"with plain_http), then whole path segments (`https://charts.example.com/private` covers `.../private/team`, not `.../private-team`). " +
			"The longest `url` that covers a dependency wins, and its credentials go to that scheme, host and port only. " +
			"repository_username and repository_password reach a dependency only on the scheme, host and port of the " +
			"chart's own URL, never another host; a chart on disk has none, so its dependencies' credentials come from " +
			"here alone."},
	{name: "values", kind: texts,
		description: "Values as YAML documents, merged in order as `helm -f` merges files: a later document " +
			"wins key by key."},
	{name: "set", kind: settings, description: "Single values, applied after `values` as `helm --set` applies them."},
	{name: "set_list", kind: lists,
		description: "Lists, applied after `set` as `helm --set name={a,b}` applies them: each value is one element " +
			"of the list, commas and braces included, read as `--set` reads a value (`true`, `42` and `null` become a " +
			"bool, a number and a null); an empty `value` sets an empty list."},
	{name: "set_sensitive", kind: settings, sensitive: true,
		description: "Single values kept out of plain output, applied last."},
	{name: "dependency_update", kind: flag,
		description: "For a chart whose dependencies are missing from its `charts/` directory, resolve them anew from " +
			"Chart.yaml's version ranges (the newest each allows), Chart.lock ignored, as `helm install " +
			"--dependency-update` runs `helm dependency update`; without it they are fetched at the versions " +
			"Chart.lock pins, as `helm dependency build`. Nothing is written into the chart's directory: the " +
			"subcharts are cached and attached in memory. Defaults to false."},
	{name: "disable_openapi_validation", kind: flag,
		description: "Leave out of each rendered object (hooks and CRDs included) the fields that the cluster's schema " +
			"of its kind does not declare, as `helm --disable-openapi-validation` lets the API server drop them, " +
			"where a Server-Side Apply would refuse them. A field of the wrong type is kept, for the server to " +
			"refuse, and an object whose kind the cluster does not describe yet (its CRD comes with the chart) is " +
			"kept as rendered. Defaults to false."},
	{name: "postrender", kind: program, description: postrenderDescription},
	{name: "render_subchart_notes", kind: flag,
		description: "Add the subcharts' rendered NOTES.txt to `notes`, after the chart's own and in the order of their " +
			"paths, as `helm install --render-subchart-notes`. Defaults to false, as the helm CLI (hashicorp/helm " +
			"defaults to true)."},
}

var (
	repositoryURLDescription = "An `https://`, `http://` or `oci://` URL: a chart repository, a registry " +
		"(`oci://registry.example.com`) or a path in either. It covers itself and every URL under it."
	repositoryAttributes = []struct {
		name, description string
		sensitive         bool
		validators        []validator.String
	}{
		{name: "url", description: repositoryURLDescription, validators: []validator.String{repositoryURL{}}},
		{name: "username", description: "User name for the repositories `url` covers.", validators: []validator.String{alsoRequires("password")}},
		{name: "password", sensitive: true, description: "Password or token for the repositories `url` covers.",
			validators: []validator.String{alsoRequires("username")}},
		{name: "ca_file", description: "PEM file of the CA that signs their certificates, in place of repository_ca_file."},
		{name: "cert_file", description: "PEM client certificate for them, in place of repository_cert_file.",
			validators: []validator.String{alsoRequires("key_file")}},
		{name: "key_file", description: "PEM key of cert_file.", validators: []validator.String{alsoRequires("cert_file")}},
	}
	// SettingName and SettingType describe name and type of a setting,
	// for the release's set_wo, which has their shape.
	SettingName = "The value's path, as `helm --set` takes it (`image.tag`, `tolerations[0].key`, " +
		"`podLabels.app\\.kubernetes\\.io/name`)."
	SettingType = "How the value is read: `auto` (the default, as `--set`: `true`, `42` and `null` become a bool, a " +
		"number and a null, and commas separate entries), `string` (as `--set-string`) or `literal` (as " +
		"`--set-literal`: the whole text, commas included, as one string)."
	// SettingTypes validates a setting's type.
	SettingTypes   = []validator.String{stringvalidator.OneOf(helmchart.SettingTypes...)}
	listValue      = "The list's elements, in order."
	noNullElements = []validator.List{listvalidator.NoNullValues()}
)

// DataSourceAttributes adds the shared arguments to a data source's
// attributes; more describes set_sensitive further.
//
//nolint:dupl // ResourceAttributes's twin: the framework's data source and resource schemas are separate types of one shape.
func DataSourceAttributes(attrs map[string]dschema.Attribute, more map[string]string) map[string]dschema.Attribute {
	for _, a := range arguments {
		desc := join(a.description, more[a.name])
		opt := !a.required
		switch a.kind {
		case text:
			attrs[a.name] = dschema.StringAttribute{Required: a.required, Optional: opt, Sensitive: a.sensitive, Description: desc}
		case flag:
			attrs[a.name] = dschema.BoolAttribute{Optional: true, Description: desc}
		case texts:
			attrs[a.name] = dschema.ListAttribute{ElementType: types.StringType, Optional: true, Description: desc}
		case settings:
			attrs[a.name] = dschema.ListNestedAttribute{Optional: true, Description: desc,
				NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
					"name":  dschema.StringAttribute{Required: true, Description: SettingName},
					"value": dschema.StringAttribute{Required: true, Sensitive: a.sensitive, Description: "The value."},
					"type":  dschema.StringAttribute{Optional: true, Description: SettingType, Validators: SettingTypes},
				}}}
		case lists:
			attrs[a.name] = dschema.ListNestedAttribute{Optional: true, Description: desc,
				NestedObject: dschema.NestedAttributeObject{Attributes: map[string]dschema.Attribute{
					"name": dschema.StringAttribute{Required: true, Description: SettingName},
					"value": dschema.ListAttribute{ElementType: types.StringType, Required: true, Description: listValue,
						Validators: noNullElements},
				}}}
		case repositories:
			nested := map[string]dschema.Attribute{}
			for _, r := range repositoryAttributes {
				nested[r.name] = dschema.StringAttribute{Required: r.name == "url", Optional: r.name != "url", Sensitive: r.sensitive,
					Description: r.description, Validators: r.validators}
			}
			attrs[a.name] = dschema.ListNestedAttribute{Optional: true, Description: desc, Validators: uniqueRepositoryURLs,
				NestedObject: dschema.NestedAttributeObject{Attributes: nested}}
		case program:
			attrs[a.name] = dataSourcePostrender(desc)
		}
	}
	return attrs
}

// ResourceAttributes adds the shared arguments to a resource's attributes;
// more describes any of them further. A change to any of them is an upgrade,
// not a replacement.
//
//nolint:dupl // see DataSourceAttributes.
func ResourceAttributes(attrs map[string]rschema.Attribute, more map[string]string) map[string]rschema.Attribute {
	for _, a := range arguments {
		desc := join(a.description, more[a.name])
		opt := !a.required
		switch a.kind {
		case text:
			attrs[a.name] = rschema.StringAttribute{Required: a.required, Optional: opt, Sensitive: a.sensitive, Description: desc}
		case flag:
			attrs[a.name] = rschema.BoolAttribute{Optional: true, Description: desc}
		case texts:
			attrs[a.name] = rschema.ListAttribute{ElementType: types.StringType, Optional: true, Description: desc}
		case settings:
			attrs[a.name] = rschema.ListNestedAttribute{Optional: true, Description: desc,
				NestedObject: rschema.NestedAttributeObject{Attributes: map[string]rschema.Attribute{
					"name":  rschema.StringAttribute{Required: true, Description: SettingName},
					"value": rschema.StringAttribute{Required: true, Sensitive: a.sensitive, Description: "The value."},
					"type":  rschema.StringAttribute{Optional: true, Description: SettingType, Validators: SettingTypes},
				}}}
		case lists:
			attrs[a.name] = rschema.ListNestedAttribute{Optional: true, Description: desc,
				NestedObject: rschema.NestedAttributeObject{Attributes: map[string]rschema.Attribute{
					"name": rschema.StringAttribute{Required: true, Description: SettingName},
					"value": rschema.ListAttribute{ElementType: types.StringType, Required: true, Description: listValue,
						Validators: noNullElements},
				}}}
		case repositories:
			nested := map[string]rschema.Attribute{}
			for _, r := range repositoryAttributes {
				nested[r.name] = rschema.StringAttribute{Required: r.name == "url", Optional: r.name != "url", Sensitive: r.sensitive,
					Description: r.description, Validators: r.validators}
			}
			attrs[a.name] = rschema.ListNestedAttribute{Optional: true, Description: desc, Validators: uniqueRepositoryURLs,
				NestedObject: rschema.NestedAttributeObject{Attributes: nested}}
		case program:
			attrs[a.name] = resourcePostrender(desc)
		}
	}
	return attrs
}

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + " " + b
}

// Known reports whether every shared argument is known, so the chart can be
// loaded and rendered now.
func (in Inputs) Known() bool {
	for _, v := range []attr.Value{in.Chart, in.Repository, in.Version, in.Devel, in.RepositoryUsername,
		in.RepositoryPassword, in.RepositoryCAFile, in.RepositoryCertFile, in.RepositoryKeyFile, in.PassCredentials, in.PlainHTTP, in.Verify, in.Keyring, in.Values,
		in.RenderSubchartNotes, in.DependencyUpdate, in.DisableOpenapiValidation} {
		if v.IsUnknown() {
			return false
		}
	}
	if !in.postrenderKnown() {
		return false
	}
	if !repositoriesKnown(in.DependencyRepositories) {
		return false
	}
	lists := []types.List{in.Values}
	for _, s := range in.SetList {
		if s.Name.IsUnknown() || s.Value.IsUnknown() {
			return false
		}
		lists = append(lists, s.Value)
	}
	for _, l := range lists {
		for _, v := range l.Elements() {
			if v.IsUnknown() {
				return false
			}
		}
	}
	for _, s := range slices.Concat(in.Set, in.SetSensitive) {
		if s.Name.IsUnknown() || s.Value.IsUnknown() || s.Type.IsUnknown() {
			return false
		}
	}
	return true
}

// Source is where the chart is.
func (in Inputs) Source() helmchart.Source {
	return helmchart.Source{
		Chart: in.Chart.ValueString(), Repository: in.Repository.ValueString(), Version: in.Version.ValueString(),
		Devel: in.Devel.ValueBool(), Username: in.RepositoryUsername.ValueString(), Password: in.RepositoryPassword.ValueString(),
		PassCredentials: in.PassCredentials.ValueBool(), PlainHTTP: in.PlainHTTP.ValueBool(),
		Verify: in.Verify.ValueBool(), Keyring: in.Keyring.ValueString(),
		CAFile: in.RepositoryCAFile.ValueString(), CertFile: in.RepositoryCertFile.ValueString(), KeyFile: in.RepositoryKeyFile.ValueString(),
		DependencyRepositories: dependencyRepositories(in.DependencyRepositories),
		DependencyUpdate:       in.DependencyUpdate.ValueBool(),
	}
}

// ChartValues are the values the chart is rendered with, before merging.
func (in Inputs) ChartValues(ctx context.Context, diags *diag.Diagnostics) helmchart.Values {
	var v helmchart.Values
	if !in.Values.IsNull() {
		diags.Append(in.Values.ElementsAs(ctx, &v.Documents, false)...)
	}
	convert := func(in []Setting) []helmchart.Setting {
		out := make([]helmchart.Setting, 0, len(in))
		for _, s := range in {
			out = append(out, helmchart.Setting{Name: s.Name.ValueString(), Value: s.Value.ValueString(), Type: s.Type.ValueString()})
		}
		return out
	}
	v.Set, v.SetSensitive = convert(in.Set), convert(in.SetSensitive)
	for _, s := range in.SetList {
		l := helmchart.ListSetting{Name: s.Name.ValueString()}
		diags.Append(s.Value.ElementsAs(ctx, &l.Values, false)...)
		v.SetList = append(v.SetList, l)
	}
	return v
}
