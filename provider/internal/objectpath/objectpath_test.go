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

// The kubectl JSONPath forms users already write read as the same paths as
// k8sconnect's own forms, and render in those.
func TestParseReadsKubectlJSONPath(t *testing.T) {
	for in, want := range map[string]string{
		`spec.template.spec.containers[?(@.name=='app')].env[?(@.name=='X')].value`: `spec.template.spec.containers[name=app].env[name=X].value`,
		`spec.ports[?(@.port==80 && @.protocol=="TCP")].targetPort`:                 `spec.ports[port=80,protocol=TCP].targetPort`,
		`metadata.labels['app.kubernetes.io/name']`:                                 `metadata.labels["app.kubernetes.io/name"]`,
		`{.spec.replicas}`:                          `spec.replicas`,
		`$.spec.replicas`:                           `spec.replicas`,
		`.status.loadBalancer.ingress[0].hostname`:  `status.loadBalancer.ingress[0].hostname`,
		`spec.containers[?(@.name=='it''s')].image`: ``,
		`metadata.annotations['a\'b']`:              `metadata.annotations["a'b"]`,
		`spec.template.spec.containers[*].image`:    `spec.template.spec.containers[*].image`,
	} {
		p, err := Parse(in)
		if want == "" {
			if err == nil {
				t.Errorf("Parse(%s) = %s, want an error", in, p)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("Parse(%s) = %s, want %s", in, p, want)
		}
	}
}

func TestParseErrorsListTheAcceptedForms(t *testing.T) {
	for _, bad := range []string{`spec.containers[?(@.name=~/app/)]`, `spec.containers[?(@.name)]`, `spec[`, `spec..x`} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "accepted forms:") || !strings.Contains(err.Error(), "[?(@.name=='app')]") {
			t.Errorf("Parse(%s) error %v should list the accepted forms", bad, err)
		}
	}
	if _, err := ParseOne("spec.containers[*].image"); err == nil || !strings.Contains(err.Error(), "must name one value") {
		t.Errorf("ParseOne of [*]: %v", err)
	}
}

func TestEveryElementMatchesAsPrefixAndExpands(t *testing.T) {
	all := MustParse("spec.containers[*].image")
	for p, want := range map[string]bool{
		"spec.containers[name=app].image":  true,
		"spec.containers[0].image":         true,
		"spec.containers[name=app].env":    false,
		"spec.initContainers[0].image":     false,
		"spec.containers[name=app].image2": false,
	} {
		if got := MustParse(p).HasPrefix(all); got != want {
			t.Errorf("%s under %s = %v, want %v", p, all, got, want)
		}
	}
	obj := map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "a", "image": "x"}, map[string]any{"name": "b"}, map[string]any{"name": "c", "image": "z"},
	}}}
	var got []string
	for _, p := range all.Expand(obj) {
		if _, ok := p.Get(obj); ok {
			got = append(got, p.String())
		}
	}
	if strings.Join(got, " ") != "spec.containers[0].image spec.containers[2].image" {
		t.Errorf("Expand = %v", got)
	}
}
