package bundles

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestCRDSizeAndDeterminism: the same inputs give the same bytes, the size
// asked for within 1% (a few dozen bytes), and the group only names the CRD.
func TestCRDSizeAndDeterminism(t *testing.T) {
	for _, size := range []int{8_000, 50_000, 200_000, 830_000} {
		a := CRD("a.example.test", "Prometheus", size)
		if b := CRD("a.example.test", "Prometheus", size); a != b {
			t.Fatalf("size %d: two calls differ", size)
		}
		if d := len(a) - size; d > size/100 || -d > size/100 {
			t.Errorf("size %d: %d bytes", size, len(a))
		}
		other := CRD("another-group.example.test", "Prometheus", size)
		if strings.ReplaceAll(a, "a.example.test", "another-group.example.test") != other {
			t.Errorf("size %d: another group changes more than the group", size)
		}
		if CRD("a.example.test", "Probe", size) == strings.ReplaceAll(a, "Prometheus", "Probe") {
			t.Errorf("size %d: Probe's schema is Prometheus's", size)
		}
	}
}

// schemaStats walks a schema as the API server's structural checks see it.
type schemaStats struct {
	t        *testing.T
	names    map[string]int
	int32s   int
	maxDepth int
	kinds    map[string]int // type or shape: object, array-of-objects, enum, int32, list-map...
}

func (s *schemaStats) walk(path string, node map[string]any, depth int) {
	t := s.t
	typ, _ := node["type"].(string)
	if typ == "" && node["x-kubernetes-int-or-string"] != true {
		t.Errorf("%s: no type", path)
	}
	if anyOf := node["anyOf"]; anyOf != nil && node["x-kubernetes-int-or-string"] != true {
		t.Errorf("%s: anyOf other than int-or-string", path)
	}
	if node["format"] == "int32" {
		s.int32s++
		s.kinds["int32"]++
	}
	if node["enum"] != nil {
		s.kinds["enum"]++
	}
	if props, ok := node["properties"].(map[string]any); ok {
		if typ != "object" {
			t.Errorf("%s: properties in a %q", path, typ)
		}
		if len(props) == 0 {
			t.Errorf("%s: empty properties", path)
		}
		s.maxDepth = max(s.maxDepth, depth)
		s.kinds["object"]++
		for name, p := range props {
			s.names[name]++
			s.walk(path+"."+name, p.(map[string]any), depth+1)
		}
		for _, r := range asStrings(node["required"]) {
			if props[r] == nil {
				t.Errorf("%s: required %s is not a property", path, r)
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		if typ != "array" {
			t.Errorf("%s: items in a %q", path, typ)
		}
		if items["properties"] != nil {
			s.kinds["array of objects"]++
		}
		if node["x-kubernetes-list-type"] == "map" {
			s.kinds["list map"]++
			for _, k := range asStrings(node["x-kubernetes-list-map-keys"]) {
				if !slices.Contains(asStrings(items["required"]), k) {
					t.Errorf("%s: list map key %s is not required", path, k)
				}
			}
		}
		s.walk(path+"[]", items, depth)
	}
}

func asStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, e := range l {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// TestCRDSchema: every property name is unique in the document, int32s
// are many, objects nest several levels deep, and the shapes that make
// prometheus-operator's schemas are all there.
func TestCRDSchema(t *testing.T) {
	for _, size := range []int{50_000, 830_000} {
		src := CRD("a.example.test", "Prometheus", size)
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		spec := doc["spec"].(map[string]any)
		if spec["scope"] != "Namespaced" || doc["metadata"].(map[string]any)["name"] != "prometheuses.a.example.test" {
			t.Errorf("size %d: scope %v, name %v", size, spec["scope"], doc["metadata"])
		}
		versions := spec["versions"].([]any)
		v := versions[0].(map[string]any)
		if len(versions) != 1 || v["name"] != "v1" || v["served"] != true || v["storage"] != true {
			t.Errorf("size %d: versions %v", size, versions)
		}
		schema := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		s := &schemaStats{t: t, names: map[string]int{}, kinds: map[string]int{}}
		s.walk("", schema, 0)
		for name, n := range s.names {
			if n > 1 {
				t.Errorf("size %d: property %s appears %d times", size, name, n)
			}
		}
		if s.int32s < size/4000 || strings.Count(src, "format: int32") != s.int32s {
			t.Errorf("size %d: %d int32 properties", size, s.int32s)
		}
		if s.maxDepth < 5 {
			t.Errorf("size %d: objects nest %d deep, want several levels", size, s.maxDepth)
		}
		for _, k := range []string{"object", "array of objects", "enum", "int32", "list map"} {
			if s.kinds[k] == 0 {
				t.Errorf("size %d: no %s", size, k)
			}
		}
		t.Logf("size %d: %d properties, %d int32, depth %d, %v", size, len(s.names), s.int32s, s.maxDepth, s.kinds)
	}
}

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{"Prometheus": "prometheuses", "Probe": "probes", "Policy": "policies", "Gateway": "gateways", "Box": "boxes"} {
		if got := plural(kind); got != want {
			t.Errorf("plural(%s) = %s, want %s", kind, got, want)
		}
	}
}

func TestWidenDeepestInt32(t *testing.T) {
	src := `properties:
  a:
    format: int32
    type: integer
  b:
    properties:
      c:
        format: int32
        type: integer
      d:
        format: int32
        type: integer
`
	got, field := WidenDeepestInt32(src)
	if field != "c" || got != strings.Replace(src, "      c:\n        format: int32", "      c:\n        format: int64", 1) {
		t.Errorf("WidenDeepestInt32 = %q, %q", got, field)
	}
	if got, field := WidenDeepestInt32("type: string\n"); got != "type: string\n" || field != "" {
		t.Errorf("no int32: %q, %q", got, field)
	}
}

// TestBundle: a bundle's size, its objects and kinds, its three steps, and
// that its names are its own.
func TestBundle(t *testing.T) {
	b := New("bench-x")
	if b.YAML() != New("bench-x").YAML() {
		t.Fatal("two bundles of the same name differ")
	}
	all := b.YAML()
	if n := len(all); n < 4_000_000 || n > 5_000_000 {
		t.Errorf("bundle is %d bytes, want 4-5 MB", n)
	}
	var crdBytes []int
	for _, d := range b.Documents(CRDs) {
		crdBytes = append(crdBytes, len(d))
	}
	if len(crdBytes) != 10 || slices.Min(crdBytes) < 45_000 || slices.Max(crdBytes) > 840_000 {
		t.Errorf("CRD sizes %v: want ten of 50 to 830 KB", crdBytes)
	}
	if b.Len() < 60 || len(b.Kinds()) < 12 {
		t.Errorf("%d objects of %d kinds: want 60 and 12 at least", b.Len(), len(b.Kinds()))
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
		"Secret", "Service", "Deployment", "StatefulSet", "DaemonSet", "PodDisruptionBudget", "NetworkPolicy", "Ingress", "IngressClass",
		"PriorityClass", "Prometheus", "ThanosRuler"} {
		if !slices.Contains(b.Kinds(), k) {
			t.Errorf("no %s", k)
		}
	}

	// The one file holds every step's documents, interleaved.
	total := 0
	for _, s := range Steps {
		total += len(b.Documents(s))
	}
	if docs := strings.Split(all, "\n---\n"); len(docs) != b.Len() || total != b.Len() {
		t.Errorf("the file has %d documents, the steps %d, the bundle %d objects", len(docs), total, b.Len())
	}
	if strings.Contains(all, "${") {
		t.Error("the bundle holds ${, which Pulumi YAML would interpolate")
	}
	for _, s := range Steps {
		for _, d := range b.Documents(s) {
			var obj struct {
				Kind     string
				Metadata struct{ Name, Namespace string }
			}
			if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
				t.Fatalf("%s: %v\n%.300s", s, err, d)
			}
			m := obj.Metadata
			switch {
			case s == Namespaced && m.Namespace != "bench-x":
				t.Errorf("%s %s: namespace %q", obj.Kind, m.Name, m.Namespace)
			case s != Namespaced && m.Namespace != "":
				t.Errorf("%s %s: cluster-scoped with a namespace", obj.Kind, m.Name)
			case s == CRDs && (obj.Kind != "CustomResourceDefinition" || !strings.HasSuffix(m.Name, "."+Group("bench-x"))):
				t.Errorf("%s %s in the CRDs step", obj.Kind, m.Name)
			case s == ClusterScoped && m.Name != "bench-x" && !strings.HasPrefix(m.Name, "bench-x-"):
				// Two installs on one cluster must not share an object.
				t.Errorf("%s %s: a cluster-scoped name not of this install", obj.Kind, m.Name)
			}
		}
	}
	if !strings.HasPrefix(b.Step(ClusterScoped), "apiVersion: v1\nkind: Namespace\n") {
		t.Error("the cluster-scoped step does not start with the Namespace")
	}
}

// diff is the documents of a and b that differ, as the lines that differ.
func diff(t *testing.T, a, b *Bundle) []string {
	t.Helper()
	var out []string
	for _, s := range Steps {
		da, db := a.Documents(s), b.Documents(s)
		if len(da) != len(db) {
			t.Fatalf("%s: %d documents, then %d", s, len(da), len(db))
		}
		for i := range da {
			la, lb := strings.Split(da[i], "\n"), strings.Split(db[i], "\n")
			if len(la) != len(lb) {
				t.Fatalf("%s document %d: %d lines, then %d", s, i, len(la), len(lb))
			}
			for j := range la {
				if la[j] != lb[j] {
					out = append(out, la[j]+" -> "+lb[j])
				}
			}
		}
	}
	return out
}

// TestUpdates: each update changes one line of one object, and leaves the
// bundle it came from as it was.
func TestUpdates(t *testing.T) {
	b := New("bench-x")
	before := b.YAML()
	if got := diff(t, b, b.WithLogLevel("debug")); !slices.Equal(got, []string{"  log.level: info ->   log.level: debug"}) {
		t.Errorf("WithLogLevel changed %q", got)
	}
	w := b.WithWidenedCRD()
	got := diff(t, b, w)
	if len(got) != 1 || strings.TrimSpace(strings.Split(got[0], " -> ")[0]) != "format: int32" {
		t.Errorf("WithWidenedCRD changed %q", got)
	}
	if name, field := w.LargestCRD(); name != "prometheuses."+Group("bench-x") || field == "" {
		t.Errorf("LargestCRD = %s, %s", name, field)
	}
	if got := diff(t, w, w.WithLogLevel("warn")); len(got) != 1 {
		t.Errorf("the updates do not add up: %q", got)
	}
	if b.YAML() != before {
		t.Error("a With method changed the bundle it was called on")
	}
}

// VersionsPatch carries the widened schema whole: applied as a merge patch to
// the original CRD, it gives the widened CRD's versions.
func TestVersionsPatchCarriesTheWholeSchema(t *testing.T) {
	crd := CRD("patch.example.test", "Patched", 40_000)
	widened, field := WidenDeepestInt32(crd)
	var patch, want map[string]any
	if err := json.Unmarshal([]byte(VersionsPatch(widened)), &patch); err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal([]byte(widened), &want); err != nil {
		t.Fatal(err)
	}
	if got := PropertyFormat(patch, field); got != "int64" {
		t.Errorf("the patch gives %s format %q, want int64", field, got)
	}
	if !reflect.DeepEqual(patch["spec"].(map[string]any)["versions"], want["spec"].(map[string]any)["versions"]) {
		t.Error("the patch's versions are not the widened CRD's")
	}
}
