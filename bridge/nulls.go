package bridge

import (
	"context"

	sdkbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	shim "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfshim"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// keepNullOutputs gives every resource's outputs an explicit null for each
// attribute the Terraform state holds as null, at every level of nesting.
//
// Why: the bridge saves beside the outputs a delta from which it rebuilds
// Terraform's raw state. An attribute missing from the outputs (the bridge
// leaves nulls out) costs one "replace" entry there, and the bridge makes
// every replace entry a secret, so each is encrypted with the stack's secrets
// provider. A KubernetesObject has some 25 null attributes (its options left
// unset, and the connection fields nobody sets, twice over): 4.2 of the 8.4
// KB each object took in the stack's checkpoint, which the engine serializes,
// hashes and writes whole after every step. An explicit null needs no entry.
// The engine keeps the nulls in the checkpoint, so the raw state rebuilt from
// it is the one the provider returned; and should a null ever be lost (a
// stack edited by hand), the provider reads an absent attribute as null.
func keepNullOutputs(info *sdkbridge.ProviderInfo) {
	resources := info.P.ResourcesMap()
	for tf, r := range info.Resources {
		res, ok := resources.GetOk(tf)
		if !ok {
			continue
		}
		schema, fields, next := res.Schema(), r.Fields, r.TransformOutputs
		r.TransformOutputs = func(ctx context.Context, outs resource.PropertyMap) (resource.PropertyMap, error) {
			if next != nil {
				var err error
				if outs, err = next(ctx, outs); err != nil {
					return nil, err
				}
			}
			return withNulls(outs, schema, fields), nil
		}
	}
}

// withNulls is m with a null for every attribute of schema it lacks, and the
// same for the objects nested in it.
func withNulls(m resource.PropertyMap, schema shim.SchemaMap, fields map[string]*sdkbridge.SchemaInfo) resource.PropertyMap {
	out := m.Copy()
	schema.Range(func(name string, s shim.Schema) bool {
		if info := fields[name]; info != nil && info.Omit {
			return true // not in the Pulumi schema (timeouts): no output either
		}
		key := resource.PropertyKey(sdkbridge.TerraformToPulumiNameV2(name, schema, fields))
		if v, ok := out[key]; ok {
			out[key] = nestedWithNulls(v, s, fields[name])
		} else {
			out[key] = resource.NewNullProperty()
		}
		return true
	})
	return out
}

// nestedWithNulls is withNulls for the objects in a value of schema s: an
// object attribute's value, or a list's or map's elements.
func nestedWithNulls(v resource.PropertyValue, s shim.Schema, info *sdkbridge.SchemaInfo) resource.PropertyValue {
	if v.IsSecret() {
		return resource.MakeSecret(nestedWithNulls(v.SecretValue().Element, s, info))
	}
	switch elem := s.Elem().(type) {
	case shim.Resource:
		if v.IsObject() {
			var fields map[string]*sdkbridge.SchemaInfo
			if info != nil {
				fields = info.Fields
			}
			return resource.NewObjectProperty(withNulls(v.ObjectValue(), elem.Schema(), fields))
		}
	case shim.Schema:
		var elemInfo *sdkbridge.SchemaInfo
		if info != nil {
			elemInfo = info.Elem
		}
		switch {
		case v.IsArray():
			elems := make([]resource.PropertyValue, len(v.ArrayValue()))
			for i, e := range v.ArrayValue() {
				elems[i] = nestedWithNulls(e, elem, elemInfo)
			}
			return resource.NewArrayProperty(elems)
		case v.IsObject():
			m := resource.PropertyMap{}
			for k, e := range v.ObjectValue() {
				m[k] = nestedWithNulls(e, elem, elemInfo)
			}
			return resource.NewObjectProperty(m)
		}
	}
	return v
}
