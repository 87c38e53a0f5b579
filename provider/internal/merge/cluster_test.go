package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection/connectiontest"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

func TestMain(m *testing.M) { localcluster.Main(m) }

const testManager = "k8sconnect-merge-test"

func create(t *testing.T, c *connection.Client, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj(t, manifest)}
	var mapping *meta.RESTMapping
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		// A CRD's kind is served a moment after the CRD is established.
		if mapping, err = c.Mapping(u.GroupVersionKind()); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Resource(mapping, u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() {
		_ = c.Resource(mapping, u.GetNamespace()).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
	})
	return out
}

// dryRunApply is the server's own answer: a forced Server-Side Apply of patch
// to live, not stored.
func dryRunApply(t *testing.T, c *connection.Client, live *unstructured.Unstructured, patch map[string]any) *unstructured.Unstructured {
	t.Helper()
	out, err := serverApply(t, c, live, patch, true)
	if err != nil {
		t.Fatalf("dry-run apply: %v", err)
	}
	return out
}

// serverApply sends patch to live's object as a forced Server-Side Apply by
// testManager, stored unless dryRun.
func serverApply(t *testing.T, c *connection.Client, live *unstructured.Unstructured, patch map[string]any, dryRun bool) (*unstructured.Unstructured, error) {
	t.Helper()
	body := copyJSON(patch).(map[string]any)
	body["apiVersion"], body["kind"] = live.GetAPIVersion(), live.GetKind()
	md, _ := body["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["name"], md["namespace"] = live.GetName(), live.GetNamespace()
	body["metadata"] = md
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	mapping, err := c.Mapping(live.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: testManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.Resource(mapping, live.GetNamespace()).Patch(context.Background(), live.GetName(), ktypes.ApplyPatchType, raw, opts)
}

func get(t *testing.T, obj map[string]any, path string) any {
	t.Helper()
	v, ok := objectpath.MustParse(path).Get(obj)
	if !ok {
		t.Fatalf("%s is missing", path)
	}
	return v
}

// pick keeps only the named fields of each element of a list of objects.
func pick(list any, fields ...string) []any {
	var out []any
	for _, e := range list.([]any) {
		m := map[string]any{}
		for _, f := range fields {
			if v, ok := e.(map[string]any)[f]; ok {
				m[f] = v
			}
		}
		out = append(out, m)
	}
	return out
}

// assertPathsAreManaged checks Paths(patch) against the fields the server
// recorded for the apply in managedFields, as projections list them.
func assertPathsAreManaged(t *testing.T, patch map[string]any, typ *Type, applied *unstructured.Unstructured) {
	t.Helper()
	ps, err := Paths(patch, typ)
	if err != nil {
		t.Fatal(err)
	}
	fields, err := managedfields.Of(applied)
	if err != nil {
		t.Fatal(err)
	}
	var managed, predicted []string
	for _, l := range projection.Leaves(fields.Manager(testManager)) {
		managed = append(managed, l.Path.String())
	}
	for _, p := range ps {
		predicted = append(predicted, p.String())
	}
	if !reflect.DeepEqual(predicted, managed) {
		t.Errorf("Paths:\n  %v\nmanagedFields of the apply:\n  %v", predicted, managed)
	}
}

func TestClusterDeploymentMetadataAndMerge(t *testing.T) {
	c := connectiontest.Local(t)
	begin := time.Now()
	typ, err := Load(c.Discovery, deploymentGVK)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded apps/v1 in %s", time.Since(begin).Round(time.Millisecond))
	// The core group's document is /openapi/v3/api/v1.
	pod, err := Load(c.Discovery, schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := pod.Lookup(objectpath.MustParse("spec.containers[0].env")); err != nil || m.ListType != "map" || m.ListMapKeys[0] != "name" {
		t.Errorf("Pod spec.containers[0].env: %+v, %v", m, err)
	}
	for path, want := range map[string]FieldMeta{
		"spec.template.spec.containers":            {ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge", PatchMergeKey: "name"},
		"spec.template.spec.containers[0].env":     {ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge", PatchMergeKey: "name"},
		"spec.template.spec.containers[0].ports":   {ListType: "map", ListMapKeys: []string{"containerPort", "protocol"}, PatchStrategy: "merge", PatchMergeKey: "containerPort"},
		"spec.template.spec.tolerations":           {ListType: "atomic"},
		"spec.template.spec.volumes":               {ListType: "map", ListMapKeys: []string{"name"}, PatchStrategy: "merge,retainKeys", PatchMergeKey: "name"},
		"spec.template.spec.nodeSelector":          {MapType: "atomic"},
		"spec.selector":                            {MapType: "atomic"},
		"spec.strategy":                            {MapType: "granular", PatchStrategy: "retainKeys"},
		"metadata.finalizers":                      {ListType: "set", PatchStrategy: "merge"},
		"spec.template.spec.containers[0].command": {ListType: "atomic"},
	} {
		got, err := typ.Lookup(objectpath.MustParse(path))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", path, got, err, want)
		}
	}

	ns := fmt.Sprintf("merge-%d", time.Now().UnixNano())
	create(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	live := create(t, c, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`, labels: {app: web, tier: front}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {disk: ssd, zone: a}
      tolerations:
      - {key: a, operator: Exists}
      - {key: b, operator: Equal, value: x, effect: NoSchedule}
      containers:
      - name: app
        image: app:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        ports: [{containerPort: 80, name: http}, {containerPort: 53, protocol: UDP}]
      - name: sidecar
        image: sidecar:1
        env: [{name: B, value: sidecar}]
`)
	patch := obj(t, `
metadata: {labels: {tier: back, owner: platform}}
spec:
  template:
    spec:
      nodeSelector: {zone: b}
      tolerations: [{key: c, operator: Exists}]
      containers:
      - name: app
        image: app:2
        env: [{name: B, value: changed}, {name: C, value: "3"}]
        ports: [{containerPort: 80, name: web}]
      - name: extra
        image: extra:1
        env: [{name: X, value: x}]
`)
	predicted, err := Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	applied := dryRunApply(t, c, live, patch).Object

	containers := "spec.template.spec.containers"
	assertSame(t, pick(get(t, predicted, containers), "name", "image", "env", "ports"),
		pick(get(t, applied, containers), "name", "image", "env", "ports"))
	for _, path := range []string{"spec.template.spec.tolerations", "spec.template.spec.nodeSelector", "metadata.labels"} {
		assertSame(t, get(t, predicted, path), get(t, applied, path))
	}
	// The server applied what we predicted, not a JSON merge of the lists.
	assertSame(t, pick(get(t, applied, containers), "name"), []any{
		map[string]any{"name": "app"}, map[string]any{"name": "sidecar"}, map[string]any{"name": "extra"}})
	assertSame(t, get(t, applied, containers+"[name=app].env"), obj(t, `
env: [{name: A, value: "1"}, {name: B, value: changed}, {name: C, value: "3"}]`)["env"])

	assertPathsAreManaged(t, patch, typ, dryRunApply(t, c, live, patch))
}

func TestClusterCustomResourceListMap(t *testing.T) {
	c := connectiontest.Local(t)
	group := fmt.Sprintf("m%d.merge.k8sconnect.test", time.Now().UnixNano())
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	create(t, c, fixtures.CRD(group, "Widget", fixtures.ListKinds+`steps:
  type: array
  items: {type: string}
settings:
  type: object
  x-kubernetes-map-type: atomic
  additionalProperties: {type: string}
`))
	typ := loadPublished(t, c, gvk)
	for path, want := range map[string]FieldMeta{
		"spec.members":  {ListType: "map", ListMapKeys: []string{"name"}},
		"spec.ports":    {ListType: "map", ListMapKeys: []string{"port", "protocol"}},
		"spec.tags":     {ListType: "set"},
		"spec.steps":    {ListType: "atomic"},
		"spec.settings": {MapType: "atomic"},
	} {
		got, err := typ.Lookup(objectpath.MustParse(path))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", path, got, err, want)
		}
	}

	ns := fmt.Sprintf("merge-crd-%d", time.Now().UnixNano())
	create(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	live := create(t, c, `
apiVersion: `+group+`/v1
kind: Widget
metadata: {name: w, namespace: `+ns+`}
spec:
  members: [{name: a, role: leader, weight: 1}, {name: b, role: follower, weight: 1}]
  ports: [{name: web, port: 80}]
  tags: [red, green]
  steps: [one, two]
  settings: {a: "1", b: "2"}
`)
	patch := obj(t, `
spec:
  members: [{name: b, weight: 5}, {name: c, role: follower}]
  ports: [{name: www, port: 80}, {name: dns, port: 53, protocol: UDP}]
  tags: [green, blue]
  steps: [three]
  settings: {b: "3"}
`)
	predicted, err := Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	applied := dryRunApply(t, c, live, patch).Object
	assertSame(t, get(t, predicted, "spec"), get(t, applied, "spec"))
	assertSame(t, get(t, applied, "spec.members"), obj(t, `
members: [{name: a, role: leader, weight: 1}, {name: b, role: follower, weight: 5}, {name: c, role: follower}]`)["members"])

	// A new set value the patch gives before a shared one: the server places
	// it there, and so does Merge, with the server's own merge.
	patch = obj(t, `spec: {tags: [blue, green]}`)
	predicted, err = Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	applied = dryRunApply(t, c, live, patch).Object
	assertSame(t, sortedStrings(get(t, predicted, "spec.tags")), sortedStrings(get(t, applied, "spec.tags")))
	assertSame(t, get(t, predicted, "spec.tags"), get(t, applied, "spec.tags"))

	assertPathsAreManaged(t, obj(t, `
spec:
  members: [{name: b, weight: 5}]
  ports: [{name: www, port: 80}]
  tags: [blue]
  steps: [three]
  settings: {b: "3"}
`), typ, dryRunApply(t, c, live, obj(t, `
spec:
  members: [{name: b, weight: 5}]
  ports: [{name: www, port: 80}]
  tags: [blue]
  steps: [three]
  settings: {b: "3"}
`)))
}

func sortedStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	sort.Strings(out)
	return out
}

// loadPublished loads gvk's type, waiting for a CRD created moments ago: the
// server publishes its schema a moment after it starts serving the kind.
func loadPublished(t *testing.T, c *connection.Client, gvk schema.GroupVersionKind) *Type {
	t.Helper()
	var typ *Type
	var err error
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if typ, err = Load(c.Discovery, gvk); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return typ
}
