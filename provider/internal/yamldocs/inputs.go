package yamldocs

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Inputs are the three ways both YAML data sources take manifests; exactly one is set.
type Inputs struct {
	Content       types.String
	Pattern       types.String
	KustomizePath types.String
	// KustomizeOptions is kustomize_options, the build's settings.
	KustomizeOptions types.Object
}

var (
	pathContent       = path.Root("content")
	pathPattern       = path.Root("pattern")
	pathKustomizePath = path.Root("kustomize_path")
)

// InputAttributes adds content, pattern and kustomize_path to a data-source schema.
func InputAttributes(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["content"] = schema.StringAttribute{
		Optional: true,
		// Sensitive: a bundle may hold Secrets, and when Terraform or OpenTofu
		// defer the read to the apply (depends_on on a resource that changes)
		// the plan prints the data source's arguments. The outputs keep a
		// Secret apart in the sensitive maps either way.
		Sensitive: true,
		Description: "Multi-document YAML, e.g. `file(\"${path.module}/app.yaml\")` or a `templatefile(...)`. " +
			"Documents that are empty or hold only comments are skipped; a `kind: List` is expanded into its items. " +
			"Sensitive, since a bundle may hold Secrets: a plan never prints it, not even when the read is deferred " +
			"to the apply. The documents come out in the plain maps, apart from the Secrets.",
	}
	attrs["pattern"] = schema.StringAttribute{
		Optional: true,
		Description: "A glob of YAML files, e.g. `\"${path.module}/manifests/*.yaml\"`; `**` matches any number of " +
			"directories. Relative patterns start from Terraform's working directory. Matching no file is an error.",
	}
	attrs["kustomize_path"] = schema.StringAttribute{
		Optional: true,
		Description: "A directory holding a kustomization.yaml, built in-process as `kubectl kustomize` would " +
			"(no plugins; Helm charts and files outside the directory as kustomize_options says).",
	}
	attrs["kustomize_options"] = KustomizeOptionsDataSourceAttribute(path.MatchRoot("kustomize_path"))
	return attrs
}

// Unknown reports whether an input is not known yet, as when content is a
// templatefile() of a value computed during the apply. The data source's outputs
// are then unknown too, rather than an error.
func (in Inputs) Unknown() bool {
	return in.Content.IsUnknown() || in.Pattern.IsUnknown() || in.KustomizePath.IsUnknown() ||
		!KustomizeOptionsKnown(in.KustomizeOptions)
}

// Validate checks that exactly one input is set. An unknown input counts as set,
// so a configuration whose one input is unknown validates.
func (in Inputs) Validate(diags *diag.Diagnostics) {
	set := 0
	for _, v := range []types.String{in.Content, in.Pattern, in.KustomizePath} {
		if !v.IsNull() {
			set++
		}
	}
	switch {
	case set == 0:
		diags.AddError("Missing input", "Set one of content, pattern or kustomize_path.")
	case set > 1:
		diags.AddError("Conflicting inputs", "Set only one of content, pattern or kustomize_path.")
	}
	for _, a := range []struct {
		p path.Path
		v types.String
	}{{pathPattern, in.Pattern}, {pathKustomizePath, in.KustomizePath}} {
		if !a.v.IsNull() && !a.v.IsUnknown() && a.v.ValueString() == "" {
			diags.AddAttributeError(a.p, "Empty "+a.p.String(), a.p.String()+" must not be empty.")
		}
	}
}

// Load reads the documents of the input that is set. Problems are reported on
// that input's attribute.
func (in Inputs) Load(ctx context.Context, diags *diag.Diagnostics) ([]Document, path.Path, bool) {
	var (
		docs []Document
		err  error
		p    path.Path
	)
	switch {
	case !in.Content.IsNull():
		p, docs = pathContent, FromContent(in.Content.ValueString())
	case !in.Pattern.IsNull():
		p = pathPattern
		docs, err = FromPattern(in.Pattern.ValueString())
	case !in.KustomizePath.IsNull():
		p = pathKustomizePath
		k, d := KustomizeFrom(ctx, in.KustomizeOptions)
		if diags.Append(d...); d.HasError() {
			return nil, p, false
		}
		docs, err = FromKustomize(in.KustomizePath.ValueString(), k)
	default:
		diags.AddError("Missing input", "Set one of content, pattern or kustomize_path.")
		return nil, p, false
	}
	if err != nil {
		diags.AddAttributeError(p, "Cannot read "+p.String(), err.Error())
		return nil, p, false
	}
	return docs, p, true
}

// AddErrors adds each problem of a Split or Classify error as its own diagnostic.
func AddErrors(diags *diag.Diagnostics, p path.Path, summary string, err error) {
	for _, e := range Errors(err) {
		diags.AddAttributeError(p, summary, e.Error())
	}
}
