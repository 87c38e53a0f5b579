package connection

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	providerschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// DefaultNote ends the description of every resource's cluster_connection.
const DefaultNote = " Optional: without it the provider block's cluster_connection is used, and no credential " +
	"is stored in this resource's state."

// Attribute is the cluster_connection attribute for a resource schema. As an
// input it is optional: a resource without it uses the provider's default.
// Its credential fields are sensitive one by one, so that a plan still shows
// the host, context and kubeconfig_file a user wrote.
func Attribute(mode Mode, description string) schema.SingleNestedAttribute {
	return resourceAttribute(mode, description, false)
}

// CopyAttribute is the copy of cluster_connection inside resource_ref. It is
// sensitive as a whole and nothing inside it is marked. Terraform stores one
// entry per sensitive path in every instance's state, null values included:
// four marked fields took about 1.2 KB more state per object than one mark on
// the whole (1,000 objects: 4.77 MB, now 3.59 MB). Its local backend rewrites
// the whole state file after each object it applies, so every byte per object
// is paid again for each object of a run. A plan loses nothing a user reads:
// beside the copy stands the user's own cluster_connection, which shows each
// field.
func CopyAttribute(mode Mode, description string) schema.SingleNestedAttribute {
	return resourceAttribute(mode, description, true)
}

// resourceAttribute builds a resource's connection attribute: sensitive as a
// whole with no field marked inside, or with each credential field marked.
func resourceAttribute(mode Mode, description string, wholeSensitive bool) schema.SingleNestedAttribute {
	if mode == Input {
		description += DefaultNote
	}
	optional, computed := mode == Input, mode == Computed
	sensitive := func(f field) bool { return f.sensitive && !wholeSensitive }
	return schema.SingleNestedAttribute{
		Description: description,
		Sensitive:   wholeSensitive,
		Optional:    optional,
		Computed:    computed,
		Attributes: build(AttrTypes, fields, builders[schema.Attribute]{
			str: func(f field) schema.Attribute {
				a := schema.StringAttribute{Description: f.description, Sensitive: sensitive(f), Optional: optional, Computed: computed}
				if optional {
					a.Validators = f.validators
				}
				return a
			},
			boolean: func(f field) schema.Attribute {
				return schema.BoolAttribute{Description: f.description, Sensitive: sensitive(f), Optional: optional, Computed: computed}
			},
			list: func(f field, elem attr.Type) schema.Attribute {
				return schema.ListAttribute{Description: f.description, Sensitive: sensitive(f), ElementType: elem, Optional: optional, Computed: computed}
			},
			mapOf: func(f field, elem attr.Type) schema.Attribute {
				return schema.MapAttribute{Description: f.description, Sensitive: sensitive(f), ElementType: elem, Optional: optional, Computed: computed}
			},
			object: func(f field, nested map[string]schema.Attribute) schema.Attribute {
				return schema.SingleNestedAttribute{Description: f.description, Sensitive: sensitive(f), Optional: optional, Computed: computed, Attributes: nested}
			},
		}),
	}
}

// ProviderAttribute is the provider block's cluster_connection: the default of
// every resource and data source that has none. Provider configuration is
// never stored in Terraform state, so credentials given here (or, better, a
// kubeconfig_file or an exec plugin) stay out of it, and rotating them changes
// no resource's plan.
//
//nolint:dupl // parallel to DataSourceAttribute: each schema package has types of its own
func ProviderAttribute(description string) providerschema.SingleNestedAttribute {
	return providerschema.SingleNestedAttribute{
		Description: description,
		Optional:    true,
		Attributes: build(AttrTypes, fields, builders[providerschema.Attribute]{
			str: func(f field) providerschema.Attribute {
				return providerschema.StringAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true, Validators: f.validators}
			},
			boolean: func(f field) providerschema.Attribute {
				return providerschema.BoolAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true}
			},
			list: func(f field, elem attr.Type) providerschema.Attribute {
				return providerschema.ListAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: elem, Optional: true}
			},
			mapOf: func(f field, elem attr.Type) providerschema.Attribute {
				return providerschema.MapAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: elem, Optional: true}
			},
			object: func(f field, nested map[string]providerschema.Attribute) providerschema.Attribute {
				return providerschema.SingleNestedAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true, Attributes: nested}
			},
		}),
	}
}

// DataSourceAttribute is the cluster_connection attribute for a data-source
// schema. It is optional, because the data sources that take it
// (k8sconnect_yaml_scoped) work without a cluster and only ask one when given;
// a data source that cannot work without it sets Required and clears Optional
// on the returned value.
//
//nolint:dupl // parallel to ProviderAttribute: each schema package has types of its own
func DataSourceAttribute(description string) dsschema.SingleNestedAttribute {
	return dsschema.SingleNestedAttribute{
		Description: description,
		Optional:    true,
		Attributes: build(AttrTypes, fields, builders[dsschema.Attribute]{
			str: func(f field) dsschema.Attribute {
				return dsschema.StringAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true, Validators: f.validators}
			},
			boolean: func(f field) dsschema.Attribute {
				return dsschema.BoolAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true}
			},
			list: func(f field, elem attr.Type) dsschema.Attribute {
				return dsschema.ListAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: elem, Optional: true}
			},
			mapOf: func(f field, elem attr.Type) dsschema.Attribute {
				return dsschema.MapAttribute{Description: f.description, Sensitive: f.sensitive, ElementType: elem, Optional: true}
			},
			object: func(f field, nested map[string]dsschema.Attribute) dsschema.Attribute {
				return dsschema.SingleNestedAttribute{Description: f.description, Sensitive: f.sensitive, Optional: true, Attributes: nested}
			},
		}),
	}
}

// builders make one schema package's attributes (the framework has a schema
// package per kind of block, with types of their own).
type builders[A any] struct {
	str, boolean func(field) A
	list, mapOf  func(field, attr.Type) A
	object       func(field, map[string]A) A
}

// build is the one walk from the connection's attribute types and their
// descriptions (fields) to a schema's attributes.
func build[A any](attrTypes map[string]attr.Type, fields map[string]field, b builders[A]) map[string]A {
	out := make(map[string]A, len(attrTypes))
	for name, typ := range attrTypes {
		f, ok := fields[name]
		if !ok {
			panic("connection: no description for cluster_connection attribute " + name)
		}
		switch t := typ.(type) {
		case basetypes.StringType:
			out[name] = b.str(f)
		case basetypes.BoolType:
			out[name] = b.boolean(f)
		case basetypes.ListType:
			out[name] = b.list(f, t.ElemType)
		case basetypes.MapType:
			out[name] = b.mapOf(f, t.ElemType)
		case basetypes.ObjectType:
			out[name] = b.object(f, build(t.AttrTypes, f.nested, b))
		default:
			panic(fmt.Sprintf("connection: attribute %s has unsupported type %T", name, typ))
		}
	}
	return out
}
