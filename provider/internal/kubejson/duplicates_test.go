package kubejson

import "testing"

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
