// Package resourceref is the resource_ref value (ADR 0007): an object's identity plus
// the connection to reach it. k8sconnect_object computes it; k8sconnect_wait takes
// it as input, so waiting needs no second copy of the connection in configuration.
package resourceref

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// Model is the resource_ref attribute.
type Model struct {
	APIVersion        types.String `tfsdk:"api_version"`
	Kind              types.String `tfsdk:"kind"`
	Namespace         types.String `tfsdk:"namespace"`
	Name              types.String `tfsdk:"name"`
	ClusterConnection types.Object `tfsdk:"cluster_connection"`
}

// AttrTypes is the object type of a resource_ref value.
var AttrTypes = map[string]attr.Type{
	"api_version":        types.StringType,
	"kind":               types.StringType,
	"namespace":          types.StringType,
	"name":               types.StringType,
	"cluster_connection": types.ObjectType{AttrTypes: connection.AttrTypes},
}

// Attribute is the resource_ref attribute, computed on objects and required on waits.
func Attribute(mode connection.Mode, description string) schema.SingleNestedAttribute {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Description: desc, Required: mode == connection.Input, Computed: mode == connection.Computed}
	}
	ns := str("Namespace; empty for cluster-scoped kinds.")
	if mode == connection.Input {
		ns.Required, ns.Optional = false, true
	}
	return schema.SingleNestedAttribute{
		Description: description,
		Required:    mode == connection.Input,
		Computed:    mode == connection.Computed,
		Attributes: map[string]schema.Attribute{
			"api_version":        str("apiVersion of the object."),
			"kind":               str("Kind of the object."),
			"namespace":          ns,
			"name":               str("Name of the object."),
			"cluster_connection": connection.CopyAttribute(mode, "Connection used to reach the object."),
		},
	}
}

// Value builds a resource_ref from an identity and a connection object.
func Value(ctx context.Context, id manifest.Identity, namespace types.String, conn types.Object) (types.Object, diag.Diagnostics) {
	return types.ObjectValueFrom(ctx, AttrTypes, Model{
		APIVersion:        types.StringValue(id.APIVersion),
		Kind:              types.StringValue(id.Kind),
		Namespace:         namespace,
		Name:              types.StringValue(id.Name),
		ClusterConnection: conn,
	})
}

// FromObject reads a resource_ref value.
func FromObject(ctx context.Context, obj types.Object) (Model, diag.Diagnostics) {
	var m Model
	diags := obj.As(ctx, &m, basetypes.ObjectAsOptions{})
	return m, diags
}

// Identity is the object the reference points at.
func (m Model) Identity() manifest.Identity {
	return manifest.Identity{
		APIVersion: m.APIVersion.ValueString(),
		Kind:       m.Kind.ValueString(),
		Namespace:  m.Namespace.ValueString(),
		Name:       m.Name.ValueString(),
	}
}
