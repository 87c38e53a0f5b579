package yamldocs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// A body is what kubectl sends for the same YAML: compact, ASCII only, and
// decoding to the same values, including those YAML 1.1 reads differently
// from JSON (yes, 0777), integers beyond 2^53, and characters Terraform
// would normalize if written as they are.
func TestJSONBodyDecodesAsKubectlReadsTheYAML(t *testing.T) {
	for name, text := range map[string]string{
		"plain":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n",
		"yaml 1.1":   "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {on: yes, mode: 0777, f: 1.0}\n",
		"big int":    "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {n: 9007199254740993, m: 9223372036854775807}\n",
		"unicode":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {decomposed: \"e\u0301\", emoji: \"\U0001F600\", cjk: 日本}\n",
		"html chars": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: \"<a & b>\"}\n",
		"json as is": "{\n  \"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n  \"metadata\": {\"name\": \"a\"}\n}\n",
		"multi-line": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  script: |\n    #!/bin/sh\n    echo \"hi\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			body, err := jsonBody(text)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(body); i++ {
				if body[i] >= utf8.RuneSelf || body[i] == '\n' {
					t.Fatalf("body has byte %q at %d: %s", body[i], i, body)
				}
			}
			if !json.Valid([]byte(body)) {
				t.Fatalf("not JSON: %s", body)
			}
			var got, want any
			if err := kubejson.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if err := kubejson.Unmarshal([]byte(text), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("body %s decodes to\n%#v\nthe YAML to\n%#v", body, got, want)
			}
		})
	}
}

// A key given twice is refused, as everywhere user text becomes values.
func TestSplitRefusesWhatKubejsonRefuses(t *testing.T) {
	_, err := Split(SplitDocuments("in.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: 1, k: 2}\n")))
	if err == nil || !strings.Contains(err.Error(), "in.yaml document 1") {
		t.Fatalf("err = %v, want one naming the document", err)
	}
}
