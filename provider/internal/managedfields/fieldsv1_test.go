package managedfields

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

const smallNumbers = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{}}},"f:tags":{"v:1":{},"v:\"a\"":{}},"f:list":{"i:0":{}}}}`

// For numbers a float64 holds, ParseSet builds the set fieldpath's own reader builds.
func TestParseSetMatchesFieldpath(t *testing.T) {
	ours, err := ParseSet([]byte(smallNumbers))
	if err != nil {
		t.Fatal(err)
	}
	theirs := fieldpath.NewSet()
	if err := theirs.FromJSON(bytes.NewReader([]byte(smallNumbers))); err != nil {
		t.Fatal(err)
	}
	if !ours.Equals(theirs) {
		t.Fatalf("ParseSet:\n%s\nfieldpath:\n%s", ours, theirs)
	}
}

// Beyond 2^53 every digit of list-map keys and set values is kept, and the set
// writes back to the same encoding.
func TestParseSetKeepsEveryDigit(t *testing.T) {
	raw := `{"f:spec":{"f:byPort":{"k:{\"port\":9007199254740993}":{".":{},"f:value":{}}},"f:tags":{"v:-9223372036854775808":{},"v:9223372036854775807":{}}}}`
	s, err := ParseSet([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := s.String()
	for _, want := range []string{"9007199254740993", "-9223372036854775808", "9223372036854775807"} {
		if !strings.Contains(got, want) {
			t.Errorf("set %s lost %s", got, want)
		}
	}
	out, err := s.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSet(out)
	if err != nil || !back.Equals(s) {
		t.Fatalf("round trip through %s: %v", out, err)
	}
}
