package objectpath

import (
	"strings"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func TestParseRendersBackTheSamePath(t *testing.T) {
	for _, s := range []string{
		"spec.replicas",
		"spec.template.spec.containers[name=app].image",
		"spec.ports[port=80,protocol=TCP].targetPort",
		`metadata.labels["app.kubernetes.io/name"]`,
		"spec.args[0]",
		"metadata.finalizers[=example.com/protect]",
		`data["key with spaces"]`,
		`spec.containers[name="odd,name"].image`,
	} {
		p, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if got := p.String(); got != s {
			t.Errorf("Parse(%q).String() = %q", s, got)
		}
	}
}

func TestParseSortsKeysAndAcceptsQuotes(t *testing.T) {
	p, err := Parse(`spec.ports[protocol="TCP", port=80]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "spec.ports[port=80,protocol=TCP]" {
		t.Fatalf("got %q", got)
	}
}

func TestParseErrorsAreActionable(t *testing.T) {
	for s, want := range map[string]string{
		"":                                       "empty",
		"spec..replicas":                         "empty field name",
		"metadata.labels.app.kubernetes.io/name": `needs brackets and quotes`,
		"spec.containers[name=app":               "unclosed [",
		"spec.containers[-1]":                    "bad selector",
		"spec.containers[1x=app]":                "bad list selector",
	} {
		_, err := Parse(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want %q", s, err, want)
		}
	}
}

func TestFromFieldPathMatchesUserSyntax(t *testing.T) {
	fp := fieldpath.MakePathOrDie("spec", "template", "spec", "containers",
		fieldpath.KeyByFields("name", "app"), "image")
	if got := FromFieldPath(fp).String(); got != "spec.template.spec.containers[name=app].image" {
		t.Fatalf("got %q", got)
	}
	ports := fieldpath.MakePathOrDie("spec", "ports", fieldpath.KeyByFields("port", 80, "protocol", "TCP"))
	if got := FromFieldPath(ports).String(); got != "spec.ports[port=80,protocol=TCP]" {
		t.Fatalf("got %q", got)
	}
	set := fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/x"))
	if got := FromFieldPath(set).String(); got != "metadata.finalizers[=example.com/x]" {
		t.Fatalf("got %q", got)
	}
}

func TestGetAndRemove(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{
			"replicas": int64(3),
			"containers": []any{
				map[string]any{"name": "app", "image": "nginx"},
				map[string]any{"name": "sidecar", "image": "envoy"},
			},
		},
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web"}},
	}
	get := func(s string) any {
		v, _ := MustParse(s).Get(obj)
		return v
	}
	if get("spec.containers[name=sidecar].image") != "envoy" || get(`metadata.labels["app.kubernetes.io/name"]`) != "web" {
		t.Fatal("Get did not follow keys")
	}
	if !MustParse("spec.containers[name=app].image").Remove(obj) {
		t.Fatal("Remove of a field in a keyed element failed")
	}
	if _, ok := MustParse("spec.containers[name=app].image").Get(obj); ok {
		t.Fatal("image still there")
	}
	if !MustParse("spec.containers[name=app]").Remove(obj) {
		t.Fatal("Remove of a keyed element failed")
	}
	if get("spec.containers[0].name") != "sidecar" {
		t.Fatalf("containers after remove: %v", get("spec.containers"))
	}
	if MustParse("spec.nothing").Remove(obj) {
		t.Fatal("Remove of a missing field reported true")
	}
}

func TestHasPrefix(t *testing.T) {
	p := MustParse("spec.template.spec.containers[name=app].image")
	if !p.HasPrefix(MustParse("spec.template")) || !p.HasPrefix(p) || p.HasPrefix(MustParse("spec.replicas")) {
		t.Fatal("HasPrefix wrong")
	}
}

// ignore_fields entries that select list elements by integers beyond 2^53 find
// them in an object decoded as kubectl decodes it (int64), and only them.
func TestSelectorsBeyondTwoPow53(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"byPort": []any{
			map[string]any{"port": int64(9007199254740992), "value": "below"},
			map[string]any{"port": int64(9007199254740993), "value": "above"},
		},
		"tags": []any{int64(9223372036854775807), int64(-9223372036854775808)},
	}}
	if v, ok := MustParse("spec.byPort[port=9007199254740993].value").Get(obj); !ok || v != "above" {
		t.Fatalf("Get = %v %v, want above", v, ok)
	}
	if !MustParse("spec.tags[=-9223372036854775808]").Remove(obj) {
		t.Fatal("the int64 minimum was not found in the set")
	}
	if tags := obj["spec"].(map[string]any)["tags"].([]any); len(tags) != 1 || tags[0] != int64(9223372036854775807) {
		t.Fatalf("tags = %v", tags)
	}
}
