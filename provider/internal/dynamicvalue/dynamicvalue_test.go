package dynamicvalue

import (
	"context"
	"math/big"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestFromUnstructuredKeepsHeterogeneousValues(t *testing.T) {
	got, err := FromUnstructured(map[string]any{
		"loadBalancer": map[string]any{"ingress": []any{
			nil,
			map[string]any{"hostname": "lb.example.com", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}},
		}},
		"ready":  true,
		"ratio":  0.5,
		"labels": map[string]any{"app.kubernetes.io/name": "web"},
		"empty":  []any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	port, _ := types.ObjectValue(map[string]attr.Type{"port": types.NumberType, "protocol": types.StringType},
		map[string]attr.Value{"port": types.NumberValue(big.NewFloat(80)), "protocol": types.StringValue("TCP")})
	ports, _ := types.TupleValue([]attr.Type{port.Type(context.Background())}, []attr.Value{port})
	ingress1, _ := types.ObjectValue(map[string]attr.Type{"hostname": types.StringType, "ports": ports.Type(context.Background())},
		map[string]attr.Value{"hostname": types.StringValue("lb.example.com"), "ports": ports})
	ingress, _ := types.TupleValue([]attr.Type{types.StringType, ingress1.Type(context.Background())},
		[]attr.Value{types.StringNull(), ingress1})
	lb, _ := types.ObjectValue(map[string]attr.Type{"ingress": ingress.Type(context.Background())}, map[string]attr.Value{"ingress": ingress})
	labels, _ := types.ObjectValue(map[string]attr.Type{"app.kubernetes.io/name": types.StringType},
		map[string]attr.Value{"app.kubernetes.io/name": types.StringValue("web")})
	empty, _ := types.TupleValue([]attr.Type{}, []attr.Value{})
	want, diags := types.ObjectValue(map[string]attr.Type{
		"loadBalancer": lb.Type(context.Background()), "ready": types.BoolType, "ratio": types.NumberType,
		"labels": labels.Type(context.Background()), "empty": empty.Type(context.Background()),
	}, map[string]attr.Value{
		"loadBalancer": lb, "ready": types.BoolValue(true), "ratio": types.NumberValue(big.NewFloat(0.5)),
		"labels": labels, "empty": empty,
	})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !got.Equal(want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFromUnstructuredRefusesWhatJSONCannotHold(t *testing.T) {
	if _, err := FromUnstructured(map[string]any{"x": struct{}{}}); err == nil {
		t.Error("a Go struct was accepted")
	}
}

// Terraform numbers hold int64's limits exactly; for Pulumi (float64 numbers)
// integers beyond ±(2^53-1) are carried as their decimal digits.
func TestFromUnstructuredExactIntegers(t *testing.T) {
	for _, n := range []int64{9007199254740991, 9007199254740993, 9223372036854775807, -9223372036854775808} {
		v, err := FromUnstructured(n)
		if err != nil {
			t.Fatal(err)
		}
		f := v.(types.Number).ValueBigFloat()
		if i, acc := f.Int64(); acc != big.Exact || i != n {
			t.Errorf("%d became %s", n, f.Text('f', -1))
		}
		p, err := Options{UnsafeIntegersAsStrings: true}.FromUnstructured(n)
		if err != nil {
			t.Fatal(err)
		}
		safe := n <= 1<<53-1 && n >= -(1<<53-1)
		if s, ok := p.(types.String); ok == safe || (ok && s.ValueString() != strconv.FormatInt(n, 10)) {
			t.Errorf("for Pulumi %d became %v", n, p)
		}
	}
}
