// Package dynamicvalue turns values read from Kubernetes objects into Terraform
// dynamic values that both Terraform and the Pulumi bridge can carry.
package dynamicvalue

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// FromUnstructured converts a value from an unstructured object into a Terraform value.
//
// Maps become objects and lists become tuples, never maps, lists or sets of one
// element type: Kubernetes values are heterogeneous, and the Pulumi bridge
// cannot carry sets inside a dynamic value. Nulls become null strings, because
// a value inside a dynamic must have a concrete type on the wire.
func FromUnstructured(v any) (attr.Value, error) {
	switch t := v.(type) {
	case nil:
		return types.StringNull(), nil
	case string:
		return types.StringValue(t), nil
	case bool:
		return types.BoolValue(t), nil
	case int64:
		return types.NumberValue(new(big.Float).SetInt64(t)), nil
	case int:
		return types.NumberValue(new(big.Float).SetInt64(int64(t))), nil
	case float64:
		return types.NumberValue(big.NewFloat(t)), nil
	case json.Number:
		f, _, err := big.ParseFloat(t.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return nil, err
		}
		return types.NumberValue(f), nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrTypes := make(map[string]attr.Type, len(t))
		attrs := make(map[string]attr.Value, len(t))
		for _, k := range keys {
			e, err := FromUnstructured(t[k])
			if err != nil {
				return nil, err
			}
			attrs[k], attrTypes[k] = e, e.Type(context.Background())
		}
		o, diags := types.ObjectValue(attrTypes, attrs)
		if diags.HasError() {
			return nil, fmt.Errorf("building an object value: %v", diags)
		}
		return o, nil
	case []any:
		elemTypes := make([]attr.Type, len(t))
		elems := make([]attr.Value, len(t))
		for i, x := range t {
			e, err := FromUnstructured(x)
			if err != nil {
				return nil, err
			}
			elems[i], elemTypes[i] = e, e.Type(context.Background())
		}
		tu, diags := types.TupleValue(elemTypes, elems)
		if diags.HasError() {
			return nil, fmt.Errorf("building a tuple value: %v", diags)
		}
		return tu, nil
	}
	return nil, fmt.Errorf("unexpected %T in an object", v)
}
