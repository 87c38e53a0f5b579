package kubejson

import (
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
)

// A key given twice is refused; a key a YAML merge brings in and the mapping
// overrides is not a duplicate (kubectl applies both the same way).
func TestDuplicateKeys(t *testing.T) {
	for text, wantErr := range map[string]bool{
		"a: 1\na: 2\n":                 true,
		"m:\n  x: 1\n  y: 2\n  x: 3\n": true,
		"base: &b {a: 1, b: two}\nm:\n  <<: *b\n  b: three\n": false,
		"a: 1\nb: 2\n": false,
	} {
		var v any
		err := Unmarshal([]byte(text), &v)
		if (err != nil) != wantErr {
			t.Errorf("%q: err = %v, want error %v", text, err, wantErr)
		}
	}
}

// The node walk finds a duplicate exactly when yaml.v3's decoder does, on
// the shapes that differ between the two: nesting in flow and block styles,
// sequences of mappings, quoted and plain spellings of one key, keys of
// other types, anchors, aliases and merges.
func TestDuplicateKeysAsYAMLv3Decodes(t *testing.T) {
	for _, text := range []string{
		"a: 1\na: 2\n",
		"a: 1\n\"a\": 2\n",
		"1: x\n\"1\": y\n",
		"true: x\n\"true\": y\n",
		"m: {x: 1, y: 2, x: 3}\n",
		"l:\n- {n: 1, n: 2}\n- {n: 3}\n",
		"l:\n- n: 1\n- n: 1\n",
		"base: &b {a: 1, b: two}\nm:\n  <<: *b\n  b: three\n",
		"base: &b {a: 1, a: 2}\nm: *b\n",
		"base: &b {a: 1}\nm:\n  <<: *b\n  <<: *b\n",
		"? [a, b]\n: 1\n? [a, b]\n: 2\n",
		"? {a: 1}\n: x\n? {b: 2}\n: y\n",
		"a: 1\nb: {c: {d: 1, e: {f: 1, f: 2}}}\n",
		"a: [1, 1, 1]\n",
		"a: null\nA: null\n",
	} {
		var v any
		decoded := yamlv3.Unmarshal([]byte(text), &v)
		wantDup := decoded != nil && strings.Contains(decoded.Error(), "already defined")
		var root yamlv3.Node
		if err := yamlv3.Unmarshal([]byte(text), &root); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if got := DuplicateKeys(&root); (got != nil) != wantDup {
			t.Errorf("%q: node walk says %v, yaml.v3's decoder %v", text, got, decoded)
		}
	}
}
