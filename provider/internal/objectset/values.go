package objectset

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

// ProjectionType is the type of one element of objects: an object's
// projection, field path to value.
var ProjectionType = types.MapType{ElemType: types.StringType}

// ProjectionValue is a projection as an element of objects.
func ProjectionValue(p projection.Projection) attr.Value {
	elems := make(map[string]attr.Value, len(p))
	for k, v := range p {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// MapOf is one element of objects as a map value (null when it is not one).
func MapOf(v attr.Value) types.Map {
	if m, ok := v.(types.Map); ok {
		return m
	}
	return types.MapNull(types.StringType)
}

// Known reports whether an element of objects is known through and through.
func Known(v attr.Value) bool {
	m, ok := v.(types.Map)
	if !ok || m.IsUnknown() || m.IsNull() {
		return false
	}
	for _, e := range m.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}
