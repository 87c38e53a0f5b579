package patch

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The no-change rule for an unchanged json_patch that no longer applies:
// proven only when the object shows every operation's effect.
func TestEffectInPlace(t *testing.T) {
	applied := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "cfg", "annotations": map[string]any{"prometheus.io/scrape": "true"}},
		"data":     map[string]any{"a": "one", "moved": "3", "d": "4", "copied": "4", "keep": "x"},
		"list":     []any{"x", "y"},
		"spec":     map[string]any{"limit": int64(9007199254740993)},
	}}
	cases := map[string]struct {
		ops  string
		want bool
	}{
		"every kind of operation, in effect": {`[
			{"op":"test","path":"/data/keep","value":"x"},
			{"op":"add","path":"/metadata/annotations","value":{}},
			{"op":"add","path":"/metadata/annotations/prometheus.io~1scrape","value":"true"},
			{"op":"replace","path":"/data/a","value":"one"},
			{"op":"remove","path":"/data/b"},
			{"op":"move","from":"/data/c","path":"/data/moved"},
			{"op":"copy","from":"/data/d","path":"/data/copied"}]`, true},
		"a test-and-set whose test now fails":    {`[{"op":"test","path":"/data/a","value":"1"},{"op":"replace","path":"/data/a","value":"one"}]`, true},
		"a replaced value someone changed since": {`[{"op":"replace","path":"/data/a","value":"two"}]`, false},
		"a removed key someone put back":         {`[{"op":"remove","path":"/data/keep"}]`, false},
		"a moved value whose target is gone":     {`[{"op":"move","from":"/data/c","path":"/data/elsewhere"}]`, false},
		"a copy that no longer matches":          {`[{"op":"copy","from":"/data/a","path":"/data/copied"}]`, false},
		"an append, which always changes":        {`[{"op":"add","path":"/list/-","value":"z"}]`, false},
		"a list element still there":             {`[{"op":"remove","path":"/list/0"}]`, false},
		"a value one unit off beyond 2^53":       {`[{"op":"replace","path":"/spec/limit","value":9007199254740992}]`, false},
		"a value beyond 2^53, in effect":         {`[{"op":"replace","path":"/spec/limit","value":9007199254740993}]`, true},
		"no operations":                          {`[]`, false},
		"not JSON":                               {`{`, false},
	}
	for name, c := range cases {
		if got := effectInPlace(applied, []byte(c.ops)); got != c.want {
			t.Errorf("%s: effectInPlace = %v, want %v", name, got, c.want)
		}
	}
}
