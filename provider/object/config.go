package object

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// desiredFromConfig is the object to apply: yaml_body without the ignored fields.
func desiredFromConfig(ctx context.Context, m model, diags *diag.Diagnostics) (*unstructured.Unstructured, []objectpath.Path) {
	ignore, ok := ignorePaths(ctx, m.IgnoreFields, diags)
	if !ok || m.YAMLBody.IsUnknown() || m.YAMLBody.IsNull() {
		return nil, ignore
	}
	obj, err := manifest.Parse(m.YAMLBody.ValueString())
	if err != nil {
		diags.AddAttributeError(pathYAMLBody, "Invalid yaml_body", err.Error())
		return nil, ignore
	}
	for i, p := range ignore {
		if p.Identifies() {
			diags.AddAttributeError(path.Root("ignore_fields").AtListIndex(i), "Invalid ignore_fields entry",
				fmt.Sprintf("%s identifies the object and cannot be ignored.", p))
			continue
		}
		p.RemoveEvery(obj.Object)
	}
	return obj, ignore
}

// ignorePaths parses ignore_fields; ok is false when it is unknown or invalid.
func ignorePaths(ctx context.Context, list types.List, diags *diag.Diagnostics) ([]objectpath.Path, bool) {
	if list.IsNull() {
		return nil, true
	}
	if list.IsUnknown() {
		return nil, false
	}
	var raw []types.String
	diags.Append(list.ElementsAs(ctx, &raw, false)...)
	ok := !diags.HasError()
	var out []objectpath.Path
	for i, s := range raw {
		if s.IsUnknown() {
			ok = false
			continue
		}
		p, err := objectpath.Parse(s.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("ignore_fields").AtListIndex(i), "Invalid ignore_fields entry", err.Error())
			ok = false
			continue
		}
		out = append(out, p)
	}
	return out, ok
}
