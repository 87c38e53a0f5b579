package helmrelease

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// postrender: a program the rendered objects are piped through
// (helmchart.PostRenderer), as `helm --post-renderer`.

type postrenderModel struct {
	BinaryPath types.String `tfsdk:"binary_path"`
	Args       types.List   `tfsdk:"args"`
}

func postrenderAttribute() schema.Attribute {
	return schema.SingleNestedAttribute{Optional: true,
		Description: "A program the chart's rendered objects are piped through before they are planned and " +
			"applied, as `helm install --post-renderer` (Helm 3's, which hashicorp/helm follows): the objects " +
			"of the templates go to its standard input as one YAML stream, and the objects it writes to its " +
			"standard output are the release's, in `objects`, the release record and the cluster. Hooks and " +
			"the CRDs of `crds/` are not piped through it, as Helm 3 pipes neither. It runs at every plan and " +
			"apply; one that fails, returns nothing or returns what is not YAML objects fails the plan, naming " +
			"it, and nothing is applied. A change to it is an upgrade.",
		Attributes: map[string]schema.Attribute{
			"binary_path": schema.StringAttribute{Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
				Description: "The program: a path (relative to the directory the engine runs in), or a name looked up in PATH."},
			"args": schema.ListAttribute{ElementType: types.StringType, Optional: true,
				Validators:  []validator.List{listvalidator.NoNullValues()},
				Description: "Its arguments."},
		}}
}

// postRenderer is the post-renderer m names, nil for none; known reports
// whether it is known yet.
func (m *model) postRenderer(ctx context.Context, diags *diag.Diagnostics) (pr *helmchart.PostRenderer, known bool) {
	if m.Postrender.IsNull() {
		return nil, true
	}
	if m.Postrender.IsUnknown() {
		return nil, false
	}
	var p postrenderModel
	diags.Append(m.Postrender.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	if diags.HasError() {
		return nil, true
	}
	if p.BinaryPath.IsUnknown() || p.Args.IsUnknown() {
		return nil, false
	}
	for _, a := range p.Args.Elements() {
		if a.IsUnknown() {
			return nil, false
		}
	}
	pr = &helmchart.PostRenderer{BinaryPath: p.BinaryPath.ValueString()}
	diags.Append(p.Args.ElementsAs(ctx, &pr.Args, false)...)
	return pr, true
}

// postrenderKnown reports whether postrender is known, so the chart can be
// rendered now.
func (m *model) postrenderKnown(ctx context.Context) bool {
	var diags diag.Diagnostics
	_, known := m.postRenderer(ctx, &diags)
	return known
}
