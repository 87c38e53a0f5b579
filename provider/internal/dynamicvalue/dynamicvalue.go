// Package dynamicvalue turns values read from Kubernetes objects into Terraform
// dynamic values that both Terraform and the Pulumi bridge can carry.
package dynamicvalue

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Options say how values are carried.
type Options struct {
	// UnsafeIntegersAsStrings carries an integer outside ±(2^53-1) (outside
	// JavaScript's safe integers) as a string of its decimal digits. Pulumi
	// holds every number as a float64, which would round such an integer:
	// 9007199254740993 would arrive as 9007199254740992. Terraform's numbers
	// are arbitrary-precision, so the Terraform provider leaves this off and
	// such integers stay numbers with every digit.
	UnsafeIntegersAsStrings bool
}

const maxSafeInteger = 1<<53 - 1

// FromUnstructured converts a value from an unstructured object into a Terraform value.
func FromUnstructured(v any) (attr.Value, error) { return Options{}.FromUnstructured(v) }

// FromUnstructured converts a value from an unstructured object into a Terraform value.
//
// Maps become objects and lists become tuples, never maps, lists or sets of one
// element type: Kubernetes values are heterogeneous, and the Pulumi bridge
// cannot carry sets inside a dynamic value. Nulls become null strings, because
// a value inside a dynamic must have a concrete type on the wire. Integers
// (int64, as the API machinery decodes them) convert exactly.
func (o Options) FromUnstructured(v any) (attr.Value, error) {
	switch t := v.(type) {
	case nil:
		return types.StringNull(), nil
	case string:
		return types.StringValue(t), nil
	case bool:
		return types.BoolValue(t), nil
	case int64:
		if o.UnsafeIntegersAsStrings && (t > maxSafeInteger || t < -maxSafeInteger) {
			return types.StringValue(strconv.FormatInt(t, 10)), nil
		}
		return types.NumberValue(new(big.Float).SetInt64(t)), nil
	case int:
		return o.FromUnstructured(int64(t))
	case float64:
		return types.NumberValue(big.NewFloat(t)), nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return o.FromUnstructured(i)
		}
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
			e, err := o.FromUnstructured(t[k])
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
			e, err := o.FromUnstructured(x)
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
