package exactcorpus

import (
	"encoding/json"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Every document decodes, names its kind's resource, and its JSON Patch is an
// array of operations carrying the payload's digits.
func TestCorpusLoads(t *testing.T) {
	docs := Load(t, "corpus", "ns")
	if len(docs) < 10 {
		t.Fatalf("only %d documents", len(docs))
	}
	for _, d := range append(docs, Load(t, "update", "ns")...) {
		var obj map[string]any
		if err := unmarshalAsKubectl([]byte(d.Text), &obj); err != nil {
			t.Errorf("%s: %v", d.Key, err)
		}
		if d.GVR().Resource == "" || d.Name == "" || d.Namespace != "ns" {
			t.Errorf("%s: %+v", d.Key, d)
		}
		var ops []map[string]any
		if err := json.Unmarshal([]byte(d.JSONPatch(t)), &ops); err != nil || len(ops) == 0 {
			t.Errorf("%s: JSON Patch %v", d.Key, err)
		}
	}
}

func TestDiffKeepsDigits(t *testing.T) {
	a := Decode(t, []byte(`{"kind":"X","metadata":{"name":"a","uid":"1"},"spec":{"n":9007199254740993,"l":[1.0]}}`))
	b := Decode(t, []byte(`{"kind":"X","metadata":{"name":"b","uid":"2"},"spec":{"n":9007199254740992,"l":[1]}}`))
	got := Diff(a, b)
	if len(got) != 2 {
		t.Fatalf("Diff = %q, want the integer and the 1.0/1 difference", got)
	}
}

// unmarshalAsKubectl decodes YAML as kubectl does: to JSON, then with
// apimachinery's number-preserving decoder.
func unmarshalAsKubectl(text []byte, v any) error {
	j, err := utilyaml.ToJSON(text)
	if err != nil {
		return err
	}
	return utiljson.Unmarshal(j, v)
}
