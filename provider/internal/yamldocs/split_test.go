package yamldocs

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 2
`

const configMap = `# settings read by web
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: prod
data:
  a: "1"
`

const namespace = `apiVersion: v1
kind: Namespace
metadata:
  name: prod
`

const clusterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules: []
`

func mustSplit(t *testing.T, content string) map[string]Manifest {
	t.Helper()
	got, err := Split(FromContent(content))
	if err != nil {
		t.Fatalf("Split: %v", err)
	}
	return got
}

func texts(ms map[string]Manifest) map[string]string {
	out := map[string]string{}
	for k, m := range ms {
		out[k] = m.Text
	}
	return out
}

func TestKeysNameObjectsAndSurviveReordering(t *testing.T) {
	docs := []string{deployment, configMap, namespace, clusterRole}
	got := texts(mustSplit(t, strings.Join(docs, "---\n")))
	want := map[string]string{
		"apps/Deployment/prod/web":                     deployment,
		"core/ConfigMap/prod/settings":                 configMap,
		"core/Namespace/prod":                          namespace,
		"rbac.authorization.k8s.io/ClusterRole/reader": clusterRole,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}

	// Reversed, with blank lines around the documents and no final newline: the
	// same keys and the same text, so for_each plans nothing.
	slices.Reverse(docs)
	reordered := "\n\n" + strings.Join(docs, "\n---\n\n") + "\n\n"
	reordered = strings.TrimSuffix(strings.TrimRight(reordered, "\n"), "\n")
	if again := texts(mustSplit(t, reordered)); !maps.Equal(again, want) {
		t.Fatalf("reordered: got %v\nwant %v", again, want)
	}
}

func TestEmptyAndCommentOnlyDocumentsAreSkipped(t *testing.T) {
	content := "---\n# only a comment\n---\n\n---\n" + namespace + "---\n~\n---\n   \n...\n---\n"
	got := mustSplit(t, content)
	if len(got) != 1 || got["core/Namespace/prod"].Text != namespace {
		t.Fatalf("got %v, want only the Namespace", texts(got))
	}
	if m := got["core/Namespace/prod"]; m.Index != 3 || m.Line != 6 {
		t.Fatalf("Namespace is document %d at line %d, want document 3 at line 6", m.Index, m.Line)
	}
	if got := mustSplit(t, ""); len(got) != 0 {
		t.Fatalf("empty content gave %v", texts(got))
	}
}

func TestSplitDocumentsTracksLines(t *testing.T) {
	content := "\ufeffa: 1\r\n--- # first separator\r\n\r\nb: 2\n---\n--- text\nc: 3"
	docs := SplitDocuments("f.yaml", []byte(content))
	type pos struct {
		index, line int
		text        string
	}
	var got []pos
	for _, d := range docs {
		got = append(got, pos{d.Index, d.Line, d.Text})
	}
	want := []pos{{1, 1, "a: 1\n"}, {2, 4, "b: 2\n"}, {3, 6, "--- text\nc: 3\n"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestDuplicatesNameBothDocuments(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", namespace+"---\n"+configMap)
	write(t, dir, "b.yaml", "# header\n---\n"+deployment+"---\n"+configMap)
	docs, err := FromPattern(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Split(docs)
	if err == nil {
		t.Fatal("duplicate ConfigMap accepted")
	}
	msg := err.Error()
	for _, want := range []string{
		"core/ConfigMap/prod/settings is defined twice",
		filepath.Join(dir, "a.yaml") + " document 2 (line 6)",
		filepath.Join(dir, "b.yaml") + " document 3 (line 11)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestInvalidYAMLNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	// Line 10 of the file is the bad one: line 5 of the second document.
	write(t, dir, "bad.yaml", namespace+"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   namespace: y\n")
	docs, err := FromPattern(filepath.Join(dir, "bad.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Split(docs)
	if err == nil {
		t.Fatal("invalid YAML accepted")
	}
	want := filepath.Join(dir, "bad.yaml") + " document 2 (line 6) is not valid YAML: line 10:"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestDocumentsThatAreNotObjects(t *testing.T) {
	for name, tc := range map[string]struct{ content, want string }{
		"sequence":      {"- a\n- b\n", "content document 1 (line 1) is a YAML sequence, not an object"},
		"scalar":        {"---\nhello\n", "content document 1 (line 2) is a YAML scalar (str)"},
		"missing":       {"metadata:\n  namespace: x\n", "content document 1 (line 1) is missing apiVersion, kind, metadata.name"},
		"generateName":  {"apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: p-\n", "uses metadata.generateName"},
		"duplicate key": {"apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata: {name: a}\n", `line 3: mapping key "kind" already defined at line 2`},
		"metadata list": {"---\napiVersion: v1\nkind: Pod\nmetadata: [a]\n", "content document 1 (line 2): line 4: metadata must be a mapping, not a YAML sequence"},
		"name list":     {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: [a]\n", "line 4: metadata.name must be a string"},
		"crd scope":     {"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b.c}\nspec: {group: b.c, names: {kind: A}}\n", `spec.scope is ""`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Split(FromContent(tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestErrorsAreAllReportedSeparately(t *testing.T) {
	content := "kind: A\n---\nkind: B\n---\n" + namespace
	_, err := Split(FromContent(content))
	if errs := Errors(err); len(errs) != 2 {
		t.Fatalf("got %d problems (%v), want 2", len(errs), err)
	}
}

func TestListIsExpanded(t *testing.T) {
	content := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: one
    namespace: prod
  # kept
  data: {a: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: two, namespace: prod}
`
	got := mustSplit(t, content)
	one, ok := got["core/ConfigMap/prod/one"]
	if !ok || len(got) != 2 {
		t.Fatalf("got %v", texts(got))
	}
	if one.Item != 1 || one.Line != 4 || !strings.Contains(one.Text, "# kept") {
		t.Fatalf("item one: %+v", one)
	}
	if _, err := Parse(Document{Source: "x", Index: 1, Text: one.Text}); err != nil {
		t.Fatalf("item text does not parse on its own: %v", err)
	}
	if w := got["core/ConfigMap/prod/two"].Where(); w != "content document 1 item 2 (line 11)" {
		t.Fatalf("Where() = %q", w)
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.yml", "sub/c.yaml", "sub/deep/d.yaml", "sub/deep/e.txt"} {
		write(t, dir, f, namespace)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := func(paths []string) []string {
		for i, p := range paths {
			paths[i], _ = filepath.Rel(dir, p)
			paths[i] = filepath.ToSlash(paths[i])
		}
		return paths
	}
	for pattern, want := range map[string][]string{
		"*.yaml":         {"a.yaml"},
		"*.y*ml":         {"a.yaml", "b.yml"},
		"**/*.yaml":      {"a.yaml", "sub/c.yaml", "sub/deep/d.yaml"},
		"sub/**/*.yaml":  {"sub/c.yaml", "sub/deep/d.yaml"},
		"sub/**":         {"sub/c.yaml", "sub/deep/d.yaml", "sub/deep/e.txt"},
		"nothing/**/*.y": nil,
	} {
		got, err := Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if got := rel(got); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", pattern, got, want)
		}
	}
	if _, err := FromPattern(filepath.Join(dir, "*.json")); err == nil || !strings.Contains(err.Error(), "matched no files") {
		t.Errorf("no match: error = %v", err)
	}
	if _, err := Glob(filepath.Join(dir, "[")); err == nil {
		t.Error("bad pattern accepted")
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each item of a List reads, on its own, exactly as kubectl reads it inside the
// List: block scalars (folded with more-indented lines, kept trailing
// newlines), escapes, YAML 1.1 scalars and large integers included.
func TestListItemsReadAsKubectlReadsTheList(t *testing.T) {
	content := "apiVersion: v1\nkind: List\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: one, namespace: prod}\n  data:\n" +
		"    folded: >\n      lines\n      joined\n\n      paragraph\n        more-indented\n" +
		"    keep: |+\n      kept\n\n\n" +
		"    literal: |\n      a\n        \n      b\n" +
		"    escaped: \"e\\u0301 \\x01\"\n" +
		"# a comment between items\n" +
		"- apiVersion: example.com/v1\n  kind: Thing\n  metadata: {name: two, namespace: prod}\n" +
		"  spec: {n: 9007199254740993, on: on, octal: 0755, f: 1.0}\n" +
		"metadata: {resourceVersion: \"\"}\n"
	var whole struct {
		Items []map[string]any `json:"items"`
	}
	if err := kubejson.Unmarshal([]byte(content), &whole); err != nil {
		t.Fatal(err)
	}
	got := mustSplit(t, content)
	for i, key := range []string{"core/ConfigMap/prod/one", "example.com/Thing/prod/two"} {
		var item map[string]any
		if err := kubejson.Unmarshal([]byte(got[key].Text), &item); err != nil {
			t.Fatalf("%s: %v\n%s", key, err, got[key].Text)
		}
		a, _ := json.Marshal(whole.Items[i])
		b, _ := json.Marshal(item)
		if string(a) != string(b) {
			t.Errorf("%s reads as\n%s\nkubectl reads it in the List as\n%s\ntext:\n%s", key, b, a, got[key].Text)
		}
	}
}
