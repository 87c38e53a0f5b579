package connection

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// ProviderAttribute is the provider block's cluster_connection: the default of
// every resource and data source that has none. Provider configuration is
// never stored in Terraform state, so credentials given here (or, better, a
// kubeconfig_file or an exec plugin) stay out of it, and rotating them changes
// no resource's plan.
func ProviderAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Description: description,
		Optional:    true,
		Attributes:  providerAttributes(AttrTypes, fields),
	}
}

func providerAttributes(attrTypes map[string]attr.Type, fields map[string]field) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(attrTypes))
	for name, typ := range attrTypes {
		f, ok := fields[name]
		if !ok {
			panic("connection: no description for cluster_connection attribute " + name)
		}
		switch t := typ.(type) {
		case basetypes.StringType:
			out[name] = schema.StringAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true}
		case basetypes.BoolType:
			out[name] = schema.BoolAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true}
		case basetypes.ListType:
			out[name] = schema.ListAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: t.ElemType, Optional: true}
		case basetypes.MapType:
			out[name] = schema.MapAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: t.ElemType, Optional: true}
		case basetypes.ObjectType:
			out[name] = schema.SingleNestedAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true,
				Attributes: providerAttributes(t.AttrTypes, f.nested)}
		default:
			panic(fmt.Sprintf("connection: attribute %s has unsupported type %T", name, typ))
		}
	}
	return out
}
