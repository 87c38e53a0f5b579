package helmchart_test

import (
	"reflect"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// set_list sets a list as `--set name={a,b}` does, with each value one
// element (commas, braces and backslashes included), after set and before
// set_sensitive; an empty list is an empty list wherever the name leads.
func TestSetList(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values helmchart.Values
		want   map[string]any
	}{
		{"typed as --set reads values",
			helmchart.Values{SetList: []helmchart.ListSetting{{Name: "a.b", Values: []string{"x", "true", "42", "null"}}}},
			map[string]any{"a": map[string]any{"b": []any{"x", true, int64(42), nil}}}},
		{"one element each, whatever it holds",
			helmchart.Values{SetList: []helmchart.ListSetting{{Name: "hosts", Values: []string{"a,b", `c}d`, `e\f`, "{g}"}}}},
			map[string]any{"hosts": []any{"a,b", "c}d", `e\f`, "{g}"}}},
		{"empty",
			helmchart.Values{Documents: []string{"a: {b: [1, 2], c: keep}"},
				SetList: []helmchart.ListSetting{{Name: "a.b"}, {Name: "d[1].e"}}},
			map[string]any{"a": map[string]any{"b": []any{}, "c": "keep"}, "d": []any{nil, map[string]any{"e": []any{}}}}},
		{"after set, before set_sensitive",
			helmchart.Values{Set: []helmchart.Setting{{Name: "a", Value: "set"}, {Name: "b", Value: "set"}},
				SetList:      []helmchart.ListSetting{{Name: "a", Values: []string{"list"}}, {Name: "b", Values: []string{"list"}}},
				SetSensitive: []helmchart.Setting{{Name: "b", Value: "sensitive"}}},
			map[string]any{"a": []any{"list"}, "b": "sensitive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.values.Merge()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
