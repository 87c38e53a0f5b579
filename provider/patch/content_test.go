package patch

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Every patch type sends integers beyond 2^53 and at the int64 limits with all
// their digits, as `kubectl patch` / `kubectl apply --server-side` would.
func TestParseContentKeepsEveryDigit(t *testing.T) {
	yamlPatch := "spec:\n  a: 9007199254740993\n  b: 9223372036854775807\n  c: -9223372036854775808\n"
	cases := []struct {
		name string
		m    model
		want string
	}{
		{"patch", model{Patch: types.StringValue(yamlPatch), JSONPatch: types.StringNull(), MergePatch: types.StringNull()},
			`{"spec":{"a":9007199254740993,"b":9223372036854775807,"c":-9223372036854775808}}`},
		{"merge_patch", model{Patch: types.StringNull(), JSONPatch: types.StringNull(), MergePatch: types.StringValue(yamlPatch)},
			`{"spec":{"a":9007199254740993,"b":9223372036854775807,"c":-9223372036854775808}}`},
		{"json_patch", model{Patch: types.StringNull(), MergePatch: types.StringNull(),
			JSONPatch: types.StringValue(`[{"op":"add","path":"/spec/a","value":9007199254740993},{"op":"test","path":"/spec/b","value":[9223372036854775807]}]`)},
			`[{"op":"add","path":"/spec/a","value":9007199254740993},{"op":"test","path":"/spec/b","value":[9223372036854775807]}]`},
	}
	for _, tc := range cases {
		ct, err := parseContent(tc.m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(ct.body) != tc.want {
			t.Errorf("%s sends %s\nwant %s", tc.name, ct.body, tc.want)
		}
	}
}
