package object

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// desiredFromConfig is the object to apply: the body (yaml_body or
// yaml_body_wo) without the ignored fields.
func desiredFromConfig(ctx context.Context, m model, diags *diag.Diagnostics) (*unstructured.Unstructured, []objectpath.Path) {
	ignore, ok := ignorePaths(ctx, m.IgnoreFields, diags)
	body, at := m.body()
	if !ok || body.IsUnknown() || body.IsNull() {
		return nil, ignore
	}
	obj, err := manifest.Parse(body.ValueString())
	if err != nil {
		diags.AddAttributeError(at, "Invalid "+at.String(), err.Error())
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

// body is the object's YAML and the attribute that holds it: yaml_body, or
// yaml_body_wo when yaml_body is null. yaml_body_wo is write-only: the engine
// gives it only in the configuration, so a model read from a plan or a state
// holds it only after withWriteOnly.
func (m model) body() (types.String, path.Path) {
	if m.YAMLBody.IsNull() && !m.YAMLBodyWO.IsNull() {
		return m.YAMLBodyWO, pathYAMLBodyWO
	}
	return m.YAMLBody, pathYAMLBody
}

// writeOnly reports whether the configuration gives the body by yaml_body_wo,
// which is all a plan or a state (where yaml_body_wo is always null) can
// tell: yaml_body is null.
func (m model) writeOnly() bool { return m.YAMLBody.IsNull() }

// withWriteOnly is m (read from a plan, where the engine leaves yaml_body_wo
// null) with the write-only body of the configuration, for desiredFromConfig.
// It must not be written back to a plan or state: the engine refuses a
// write-only value there.
func withWriteOnly(ctx context.Context, m model, config tfsdk.Config, diags *diag.Diagnostics) model {
	diags.Append(config.GetAttribute(ctx, pathYAMLBodyWO, &m.YAMLBodyWO)...)
	return m
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
