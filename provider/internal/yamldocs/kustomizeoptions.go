package yamldocs

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// kustomize_options: the flags of `kubectl kustomize` a kustomization may
// need, one definition for k8sconnect_manifest_set's kustomization and the
// data sources' kustomize_path.

// KustomizeOptionsAttrTypes are the attributes of kustomize_options.
var KustomizeOptionsAttrTypes = map[string]attr.Type{
	"load_restrictor": types.StringType,
	"enable_helm":     types.BoolType,
	"helm_command":    types.StringType,
}

const (
	kustomizeOptionsDescription = "Settings of the kustomize build, as `kubectl kustomize` takes them as flags. " +
		"Unset, the build is `kubectl kustomize`'s with its defaults."
	loadRestrictorDescription = "`--load-restrictor`: `LoadRestrictionsRootOnly` (the default: files outside the " +
		"kustomization's directory may not be loaded; other kustomization directories may) or " +
		"`LoadRestrictionsNone`."
	enableHelmDescription = "`--enable-helm`: inflate the kustomization's `helmCharts` by running `helm template` " +
		"with the helm CLI (Helm 3 or 4), as kustomize does. Defaults to false, as in kustomize. The chart is " +
		"rendered by the helm binary, not by k8sconnect; for a Helm release use `k8sconnect_helm_release`."
	helmCommandDescription = "`--helm-command`: the helm binary `enable_helm` runs, a name found on PATH or a " +
		"path. Defaults to `helm`."
)

func kustomizeOptionsValidators(source path.Expression) []validator.Object {
	return []validator.Object{objectvalidator.AlsoRequires(source)}
}

// KustomizeOptionsResourceAttribute is kustomize_options in a resource
// schema; source is the attribute that names the kustomization.
func KustomizeOptionsResourceAttribute(source path.Expression) rschema.SingleNestedAttribute {
	return rschema.SingleNestedAttribute{Optional: true, Description: kustomizeOptionsDescription,
		Validators: kustomizeOptionsValidators(source),
		Attributes: map[string]rschema.Attribute{
			"load_restrictor": rschema.StringAttribute{Optional: true, Description: loadRestrictorDescription,
				Validators: []validator.String{stringvalidator.OneOf(LoadRestrictors...)}},
			"enable_helm": rschema.BoolAttribute{Optional: true, Description: enableHelmDescription},
			"helm_command": rschema.StringAttribute{Optional: true, Description: helmCommandDescription,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
		}}
}

// KustomizeOptionsDataSourceAttribute is kustomize_options in a data
// source schema.
func KustomizeOptionsDataSourceAttribute(source path.Expression) dschema.SingleNestedAttribute {
	return dschema.SingleNestedAttribute{Optional: true, Description: kustomizeOptionsDescription,
		Validators: kustomizeOptionsValidators(source),
		Attributes: map[string]dschema.Attribute{
			"load_restrictor": dschema.StringAttribute{Optional: true, Description: loadRestrictorDescription,
				Validators: []validator.String{stringvalidator.OneOf(LoadRestrictors...)}},
			"enable_helm": dschema.BoolAttribute{Optional: true, Description: enableHelmDescription},
			"helm_command": dschema.StringAttribute{Optional: true, Description: helmCommandDescription,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
		}}
}

type kustomizeOptionsModel struct {
	LoadRestrictor types.String `tfsdk:"load_restrictor"`
	EnableHelm     types.Bool   `tfsdk:"enable_helm"`
	HelmCommand    types.String `tfsdk:"helm_command"`
}

// KustomizeOptionsKnown reports whether every setting of obj is known.
func KustomizeOptionsKnown(obj types.Object) bool {
	if obj.IsUnknown() {
		return false
	}
	for _, v := range obj.Attributes() {
		if v.IsUnknown() {
			return false
		}
	}
	return true
}

// KustomizeFrom reads kustomize_options, which must be known.
func KustomizeFrom(ctx context.Context, obj types.Object) (Kustomize, diag.Diagnostics) {
	if obj.IsNull() || obj.IsUnknown() {
		return Kustomize{}, nil
	}
	var m kustomizeOptionsModel
	diags := obj.As(ctx, &m, basetypes.ObjectAsOptions{})
	return Kustomize{LoadRestrictor: m.LoadRestrictor.ValueString(), EnableHelm: m.EnableHelm.ValueBool(),
		HelmCommand: m.HelmCommand.ValueString()}, diags
}
