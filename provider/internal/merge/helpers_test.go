package merge

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"sigs.k8s.io/yaml"
)

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	daemonSetGVK  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	widgetGVK     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
)

// testdataDocs serves the documents in testdata, named as the API server's paths
// (apis__apps__v1_openapi.json is /openapi/v3/apis/apps/v1).
type testdataDocs struct{ client openapi.Client }

func (f *testdataDocs) OpenAPIV3() openapi.Client { return f.client }

func fixtureType(t *testing.T, gvk schema.GroupVersionKind) *Type {
	t.Helper()
	typ, err := Load(&testdataDocs{openapitest.NewFileClient("testdata")}, gvk)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func obj(t *testing.T, y string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("bad test YAML: %v\n%s", err, y)
	}
	return m
}

// normal round-trips v through JSON so numbers of any Go type compare equal.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSame(t *testing.T, got any, want any) {
	t.Helper()
	if g, w := normal(t, got), normal(t, want); !reflect.DeepEqual(g, w) {
		gy, _ := yaml.Marshal(g)
		wy, _ := yaml.Marshal(w)
		t.Errorf("got:\n%s\nwant:\n%s", gy, wy)
	}
}

func mustMerge(t *testing.T, typ *Type, live, patch string) map[string]any {
	t.Helper()
	out, err := Merge(obj(t, live), obj(t, patch), typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonKey is v as JSON text, to compare values whatever Go types hold them.
func jsonKey(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}
