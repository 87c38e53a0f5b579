package kubejson

import (
	"encoding/json"
	"testing"
)

// What kubectl sends for each scalar: YAML → JSON → int64 when it fits, float64
// otherwise, marshalled with encoding/json.
func TestUnmarshalKeepsWhatKubectlKeeps(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"9007199254740992", "9007199254740992"},
		{"9007199254740993", "9007199254740993"},
		{"9223372036854775807", "9223372036854775807"},
		{"-9223372036854775808", "-9223372036854775808"},
		// Beyond int64 kubectl decodes a float64, and so do we.
		{"9223372036854775808", "9223372036854776000"},
		{"18446744073709551615", "18446744073709552000"},
		{"1.0", "1"},
		{"1e-7", "1e-7"},
		{"0.1000000000000000055511151231257827", "0.1"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"0x7FFFFFFFFFFFFFFF", "9223372036854775807"},
		{"0o17", "15"},
		{"017", "15"}, // YAML 1.1 octal
		{"on", "true"},
		{"~", "null"},
		{"2024-01-02", `"2024-01-02"`},
	}
	for _, tc := range cases {
		var v map[string]any
		if err := Unmarshal([]byte("v: "+tc.yaml+"\n"), &v); err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		got, _ := json.Marshal(v["v"])
		if string(got) != tc.want {
			t.Errorf("%s: sent as %s, want %s (%T)", tc.yaml, got, tc.want, v["v"])
		}
	}
}

func TestUnmarshalJSONArrayKeepsIntegers(t *testing.T) {
	var ops []map[string]any
	if err := Unmarshal([]byte(`[{"op":"add","path":"/spec/n","value":9223372036854775807}]`), &ops); err != nil {
		t.Fatal(err)
	}
	if v, ok := ops[0]["value"].(int64); !ok || v != 9223372036854775807 {
		t.Fatalf("value = %#v, want int64 max", ops[0]["value"])
	}
}
