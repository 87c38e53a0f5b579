package yamldocs

import (
	"strings"
	"testing"
)

func TestParseCacheServesTheSameDocumentAgain(t *testing.T) {
	parsed.reset()
	docs := FromContent("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
	if _, err := Split(docs); err != nil {
		t.Fatal(err)
	}
	if n := len(parsed.newer); n != 1 {
		t.Fatalf("%d results kept after one parse, want 1", n)
	}
	for k, r := range parsed.newer {
		r.manifests[0].Body = "kept"
		parsed.newer[k] = r
	}
	again, err := Split(docs)
	if err != nil {
		t.Fatal(err)
	}
	if got := again["core/ConfigMap/a"].Body; got != "kept" {
		t.Fatalf("the second parse gave body %q, not the kept result", got)
	}
}

func TestParseCacheKeysByWhereTheDocumentIs(t *testing.T) {
	parsed.reset()
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	one := SplitDocuments("one.yaml", []byte(text))
	two := SplitDocuments("two.yaml", []byte(text))
	a, err := Split(one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Split(two)
	if err != nil {
		t.Fatal(err)
	}
	if a["core/ConfigMap/a"].Source != "one.yaml" || b["core/ConfigMap/a"].Source != "two.yaml" {
		t.Fatalf("sources %q and %q: the same text in another file must name its own file",
			a["core/ConfigMap/a"].Source, b["core/ConfigMap/a"].Source)
	}
}

func TestParseCacheKeepsNoFailure(t *testing.T) {
	parsed.reset()
	docs := FromContent("kind: ConfigMap\nmetadata:\n  name: a\n")
	for range 2 {
		if _, err := Split(docs); err == nil || !strings.Contains(err.Error(), "apiVersion") {
			t.Fatalf("err = %v, want the missing apiVersion named", err)
		}
	}
	if n := len(parsed.newer); n != 0 {
		t.Fatalf("%d results kept, want none for a document that failed", n)
	}
}

func TestParseCacheIsBounded(t *testing.T) {
	parsed.reset()
	big := strings.Repeat("x", parseCacheBytes/3)
	for i := range 4 {
		docs := FromContent("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a" + string(rune('0'+i)) + "\ndata:\n  k: " + big + "\n")
		if _, err := Split(docs); err != nil {
			t.Fatal(err)
		}
	}
	if parsed.newerBytes > parseCacheBytes {
		t.Fatalf("the newer generation holds %d bytes, over the bound of %d", parsed.newerBytes, parseCacheBytes)
	}
	if n := len(parsed.newer) + len(parsed.older); n >= 4 {
		t.Fatalf("%d results kept of four large documents, want the oldest dropped", n)
	}
}
