package chartinputs

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// postrender: a program the rendered objects are piped through
// (helmchart.PostRenderer), as `helm --post-renderer`.

const (
	postrenderDescription = "A program the chart's rendered objects are piped through, as `helm install " +
		"--post-renderer` (Helm 3's, which hashicorp/helm follows): the objects of the templates go to its standard " +
		"input as one YAML stream, and the objects it writes to its standard output take their place. Hooks and " +
		"the CRDs of `crds/` are not piped through it, as Helm 3 pipes neither. It runs wherever the chart is " +
		"rendered; one that fails, returns nothing or returns what is not YAML objects is an error naming it, " +
		"showing what it printed on its standard error with set_sensitive values and the values of the Secrets " +
		"it was given hidden."
	binaryPathDescription = "The program: a path (relative to the directory the engine runs in), or a name looked up in PATH."
	argsDescription       = "Its arguments."
)

var (
	binaryPathValidators = []validator.String{stringvalidator.LengthAtLeast(1)}
	argsValidators       = []validator.List{listvalidator.NoNullValues()}
)

type postrenderModel struct {
	BinaryPath types.String `tfsdk:"binary_path"`
	Args       types.List   `tfsdk:"args"`
}

//nolint:dupl // resourcePostrender's twin: the framework's data source and resource schemas are separate types of one shape.
func dataSourcePostrender(desc string) dschema.Attribute {
	return dschema.SingleNestedAttribute{Optional: true, Description: desc,
		Attributes: map[string]dschema.Attribute{
			"binary_path": dschema.StringAttribute{Required: true, Validators: binaryPathValidators, Description: binaryPathDescription},
			"args": dschema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: argsValidators,
				Description: argsDescription},
		}}
}

//nolint:dupl // see dataSourcePostrender.
func resourcePostrender(desc string) rschema.Attribute {
	return rschema.SingleNestedAttribute{Optional: true, Description: desc,
		Attributes: map[string]rschema.Attribute{
			"binary_path": rschema.StringAttribute{Required: true, Validators: binaryPathValidators, Description: binaryPathDescription},
			"args": rschema.ListAttribute{ElementType: types.StringType, Optional: true, Validators: argsValidators,
				Description: argsDescription},
		}}
}

// PostRenderer is the post-renderer postrender names, nil for none (and
// while it is not known: Known says so first).
func (in Inputs) PostRenderer(ctx context.Context, diags *diag.Diagnostics) *helmchart.PostRenderer {
	pr, _ := in.postRenderer(ctx, diags)
	return pr
}

func (in Inputs) postRenderer(ctx context.Context, diags *diag.Diagnostics) (pr *helmchart.PostRenderer, known bool) {
	if in.Postrender.IsNull() {
		return nil, true
	}
	if in.Postrender.IsUnknown() {
		return nil, false
	}
	var p postrenderModel
	diags.Append(in.Postrender.As(ctx, &p, basetypes.ObjectAsOptions{})...)
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
func (in Inputs) postrenderKnown() bool {
	var diags diag.Diagnostics
	_, known := in.postRenderer(context.Background(), &diags)
	return known
}
