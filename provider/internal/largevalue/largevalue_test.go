package largevalue_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/k8sconnect/k8sconnect/provider/internal/largevalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

func TestOf(t *testing.T) {
	small := strings.Repeat("a", largevalue.Threshold)
	if got := largevalue.Of(small); got != small {
		t.Errorf("a value of exactly Threshold bytes is not kept as it is")
	}
	large := small + "b"
	got := largevalue.Of(large)
	if !largevalue.Is(got) || !strings.HasPrefix(got, "(65537 bytes, sha256:") {
		t.Errorf("Of(%d bytes) = %.80q, want a stand-in", len(large), got)
	}
	if largevalue.Of(small+"c") == got {
		t.Error("two different large values have the same stand-in")
	}
	if largevalue.Of(large) != got {
		t.Error("the same value has two stand-ins")
	}
	// Terraform holds strings in NFC: a value that differs only in its
	// normalization is the same value.
	decomposed, composed := small+"e\u0301", small+"\u00e9"
	if largevalue.Of(decomposed) != largevalue.Of(composed) {
		t.Error("a value re-normalized to NFC has another stand-in")
	}
	for _, s := range []string{small, "(12 bytes, sha256:abc)", "", got + " "} {
		if largevalue.Is(s) {
			t.Errorf("Is(%.40q) = true", s)
		}
	}
}

func TestChanges(t *testing.T) {
	path := objectpath.MustParse("spec.versions")
	was := []any{map[string]any{
		"name":   "v1",
		"schema": map[string]any{"format": "int32", "maxLength": int64(5), "gone": "x"},
		"list":   []any{"a", "b"},
	}}
	now := []any{map[string]any{
		"name":   "v1",
		"schema": map[string]any{"format": "int64", "maxLength": int64(5), "added": true},
		"list":   []any{"a"},
	}, map[string]any{"name": "v2"}}
	changes, total := largevalue.Changes(path, was, now, 10)
	var got []string
	for _, c := range changes {
		got = append(got, c.Path.String()+": "+c.Was+" -> "+c.Now)
	}
	want := []string{
		`spec.versions[0].list[1]: "b" -> (none)`,
		`spec.versions[0].schema.added: (none) -> true`,
		`spec.versions[0].schema.format: "int32" -> "int64"`,
		`spec.versions[0].schema.gone: "x" -> (none)`,
		`spec.versions[1]: (none) -> {"name":"v2"}`,
	}
	if total != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Changes = %d\n%s\nwant %d\n%s", total, strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	if changes, total := largevalue.Changes(path, was, now, 2); len(changes) != 2 || total != 5 {
		t.Errorf("with a limit of 2: %d changes listed of %d, want 2 of 5", len(changes), total)
	}
	if _, total := largevalue.Changes(path, was, was, 10); total != 0 {
		t.Errorf("a value compared with itself has %d changes", total)
	}
	long := strings.Repeat("é", 100)
	changes, _ = largevalue.Changes(path, map[string]any{"d": long}, map[string]any{"d": "x"}, 1)
	if c := changes[0]; len(c.Was) > 80 || !utf8.ValidString(c.Was) || !strings.HasSuffix(c.Was, "...") || !strings.HasPrefix(c.Was, `"é`) {
		t.Errorf("a long value is shown as %q, want it cut to 80 bytes", c.Was)
	}
}
