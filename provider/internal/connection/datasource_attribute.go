package connection

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// DataSourceAttribute is the cluster_connection attribute for a data-source schema.
// It is optional, because the data sources that take it (k8sconnect_yaml_scoped)
// work without a cluster and only ask one when given; a data source that cannot
// work without it sets Required and clears Optional on the returned value.
func DataSourceAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Description: description,
		Optional:    true,
		Attributes:  dataSourceAttributes(AttrTypes, fields),
	}
}

func dataSourceAttributes(attrTypes map[string]attr.Type, fields map[string]field) map[string]schema.Attribute {
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
				Attributes: dataSourceAttributes(t.AttrTypes, f.nested)}
		default:
			panic(fmt.Sprintf("connection: attribute %s has unsupported type %T", name, typ))
		}
	}
	return out
}
