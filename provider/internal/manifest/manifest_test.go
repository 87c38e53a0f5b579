package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRejectsWhatTheServerWouldRejectOrRewrite(t *testing.T) {
	cases := []struct {
		name, body, wantErr string
	}{
		{"empty", "", "yaml_body is empty"},
		{"only comments", "# nothing\n---\n# still nothing\n", "yaml_body is empty"},
		{"two documents", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", "holds 2 documents"},
		{"not a mapping", "- a\n- b\n", "must be a YAML mapping (an object with apiVersion, kind and metadata), not a list"},
		{"a scalar", "hello\n", "must be a YAML mapping (an object with apiVersion, kind and metadata), not a string"},
		{"duplicate key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: b}\ndata: {c: d}\n", `mapping key "data" already defined`},
		{"bad indentation", "apiVersion: v1\nkind: ConfigMap\n metadata:\n  name: x\n", "not valid YAML"},
		{"missing everything", "data: {}\n", "missing apiVersion, kind, metadata.name"},
		{"generateName", "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n", "generateName"},
		{"status", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}\n", "sets status"},
		{"uid", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, uid: 123}\n", "metadata.uid"},
		{"resourceVersion", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, resourceVersion: \"1\"}\n", "metadata.resourceVersion"},
		{"managedFields", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: []}\n", "metadata.managedFields"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.body)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseAcceptsOneObjectAmongComments(t *testing.T) {
	obj, err := Parse("# leading comment\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n---\n# trailing\n")
	if err != nil {
		t.Fatal(err)
	}
	id := IdentityOf(obj)
	want := Identity{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	if id != want {
		t.Fatalf("identity = %+v, want %+v", id, want)
	}
	if got := id.GVK().Group; got != "apps" {
		t.Fatalf("group = %q, want apps", got)
	}
	if id.String() != "Deployment prod/web" {
		t.Fatalf("String() = %q", id.String())
	}
}

// Integers beyond 2^53 and at the int64 limits reach the server with every
// digit, as kubectl sends them (a float64 on the way would round them).
func TestParseKeepsEveryDigitKubectlKeeps(t *testing.T) {
	obj, err := Parse("apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: thing}\nspec:\n" +
		"  above: 9007199254740993\n  max: 9223372036854775807\n  min: -9223372036854775808\n" +
		"  list: [9007199254740995, 1.0, 1e-7]\n")
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(obj.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"above":9007199254740993,"list":[9007199254740995,1,1e-7],"max":9223372036854775807,"min":-9223372036854775808}`
	if string(body) != want {
		t.Fatalf("sent %s\nwant %s", body, want)
	}
}
