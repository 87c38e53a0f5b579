package yamldocs

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// kustomize builds through its own YAML tree (kyaml); the documents it hands to
// yaml_split and yaml_scoped must keep every digit, as `kubectl kustomize`
// does, for k8sconnect_object to send them on exactly.
func TestFromKustomizeKeepsEveryDigit(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", "resources: [exact.yaml]\nnamespace: numbers\nlabels: [{pairs: {team: platform}}]\n")
	write("exact.yaml", `apiVersion: exact.k8sconnect.test/v1
kind: Exact
metadata: {name: limits}
spec:
  above53: 9007199254740993
  int64max: 9223372036854775807
  int64min: -9223372036854775808
  tiny: 1e-7
  octal: 0755
  list: [9007199254740993, 1.0]
`)
	docs, err := FromKustomize(dir, Kustomize{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 {
		t.Fatalf("want one document, got %d", len(docs))
	}
	var ours map[string]any
	if err := kubejson.Unmarshal([]byte(docs[0].Text), &ours); err != nil {
		t.Fatal(err)
	}
	// Integers keep their digits; kustomize re-renders floats and YAML 1.1
	// octals (1e-07, 493), the same values kubectl sends.
	spec := ours["spec"].(map[string]any)
	want := map[string]any{
		"above53": int64(9007199254740993), "int64max": int64(9223372036854775807),
		"int64min": int64(-9223372036854775808), "tiny": 1e-7, "octal": int64(493),
		"list": []any{int64(9007199254740993), int64(1)},
	}
	for k, v := range want {
		if !reflect.DeepEqual(spec[k], v) {
			t.Errorf("spec.%s = %#v after kustomize, want %#v", k, spec[k], v)
		}
	}
	// The reference: kubectl's own kustomize build of the same directory.
	out, err := exec.Command("kubectl", "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	var theirs map[string]any
	if err := kubejson.Unmarshal(out, &theirs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ours, theirs) {
		t.Errorf("yaml_split's kustomize build differs from kubectl kustomize:\nours:   %v\ntheirs: %v", ours, theirs)
	}
}
