package merge

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

func TestLookupReadsMergeMetadata(t *testing.T) {
	deploy, widget := fixtureType(t, deploymentGVK), fixtureType(t, widgetGVK)
	for _, tc := range []struct {
		typ  *Type
		path string
		want FieldMeta
	}{
		{deploy, "spec.template.spec.containers", FieldMeta{ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge", PatchMergeKey: "name"}},
		{deploy, "spec.template.spec.containers[name=app].env", FieldMeta{ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge", PatchMergeKey: "name"}},
		{deploy, "spec.template.spec.containers[0].ports", FieldMeta{ListType: "map", ListMapKeys: []string{"containerPort", "protocol"}, PatchStrategy: "merge", PatchMergeKey: "containerPort"}},
		{deploy, "spec.template.spec.containers[0].args", FieldMeta{ListType: "atomic"}},
		{deploy, "spec.template.spec.tolerations", FieldMeta{ListType: "atomic"}},
		{deploy, "spec.template.spec.volumes", FieldMeta{ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge,retainKeys", PatchMergeKey: "name"}},
		{deploy, "spec.template.spec.volumes[name=v].configMap", FieldMeta{MapType: "granular"}},
		{deploy, "spec.template.spec.nodeSelector", FieldMeta{MapType: "atomic"}},
		{deploy, "spec.selector", FieldMeta{MapType: "atomic"}},
		{deploy, "spec.strategy", FieldMeta{MapType: "granular", PatchStrategy: "retainKeys"}},
		{deploy, "metadata.labels", FieldMeta{MapType: "granular"}},
		{deploy, `metadata.labels["app.kubernetes.io/name"]`, FieldMeta{}},
		{deploy, "metadata.finalizers", FieldMeta{ListType: "set", PatchStrategy: "merge"}},
		{deploy, "spec.template.spec.containers[0].env[0].valueFrom.fieldRef", FieldMeta{MapType: "atomic"}},
		{widget, "spec.members", FieldMeta{ListType: "map", ListMapKeys: []string{"name"}}},
		{widget, "spec.ports", FieldMeta{ListType: "map", ListMapKeys: []string{"port", "protocol"}}},
		{widget, "spec.tags", FieldMeta{ListType: "set"}},
		{widget, "spec.steps", FieldMeta{ListType: "atomic"}},
		{widget, "spec.settings", FieldMeta{MapType: "atomic"}},
		{widget, "metadata.finalizers", FieldMeta{ListType: "set", PatchStrategy: "merge"}},
	} {
		got, err := tc.typ.Lookup(objectpath.MustParse(tc.path))
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.typ.GVK().Kind, tc.path, got, tc.want)
		}
	}
	for path, want := range map[string]string{
		"spec.replicaz":            "has no field spec.replicaz",
		"spec.replicas.x":          "spec.replicas is not an object",
		"spec.template.spec[0]":    "spec.template.spec is not a list",
		"spec.template.metadata.x": "has no field spec.template.metadata.x",
	} {
		if _, err := deploy.Lookup(objectpath.MustParse(path)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
}

// counting serves the fixtures, counting document reads and invalidations.
type counting struct {
	client      openapi.Client
	reads       atomic.Int32
	invalidated atomic.Int32
}

func (c *counting) OpenAPIV3() openapi.Client { return countingClient{c} }
func (c *counting) Invalidate()               { c.invalidated.Add(1) }

type countingClient struct{ c *counting }

func (cc countingClient) Paths() (map[string]openapi.GroupVersion, error) {
	paths, err := cc.c.client.Paths()
	for k, gv := range paths {
		paths[k] = countingGV{gv, cc.c}
	}
	return paths, err
}

type countingGV struct {
	openapi.GroupVersion
	c *counting
}

func (g countingGV) Schema(contentType string) ([]byte, error) {
	g.c.reads.Add(1)
	return g.GroupVersion.Schema(contentType)
}

func TestLoadReadsEachGroupVersionOnce(t *testing.T) {
	src := &counting{client: openapitest.NewFileClient("testdata")}
	for _, gvk := range []schema.GroupVersionKind{deploymentGVK, daemonSetGVK, deploymentGVK, widgetGVK, widgetGVK} {
		if _, err := Load(src, gvk); err != nil {
			t.Fatal(err)
		}
	}
	if n := src.reads.Load(); n != 2 {
		t.Errorf("read %d documents for two group-versions", n)
	}
	if n := src.invalidated.Load(); n != 0 {
		t.Errorf("invalidated %d times with every kind found", n)
	}

	// A kind the documents do not know invalidates the source once: it may be
	// a CRD created since they were listed.
	_, err := Load(src, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"})
	if !errors.Is(err, errNotPublished) || !strings.Contains(err.Error(), "no schema for kind StatefulSet") {
		t.Errorf("unknown kind: %v", err)
	}
	_, err = Load(src, schema.GroupVersionKind{Group: "nothere.io", Version: "v1", Kind: "Thing"})
	if err == nil || !strings.Contains(err.Error(), "/openapi/v3/apis/nothere.io/v1") {
		t.Errorf("unknown group: %v", err)
	}
	if n := src.invalidated.Load(); n != 2 {
		t.Errorf("invalidated %d times for two unknown kinds, want 2", n)
	}
}

func TestLoadReadsCoreGroupFromAPIV1(t *testing.T) {
	_, err := Load(&testdataDocs{openapitest.NewFileClient("testdata")}, schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	if err == nil || !strings.Contains(err.Error(), "/openapi/v3/api/v1") {
		t.Errorf("core group: %v", err)
	}
}
