package merge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection/connectiontest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// These tests hold Merge against the server's forced dry-run apply of the same
// patch, by the same manager, for each way a list can merge: list-maps (one
// key and two, one of them defaulted), sets, atomic lists, and a union whose
// member the patch switches (retainKeys on a built-in kind, a plain object on
// a custom resource), where what the manager applied before matters.

// applyForReal stores patch as testManager's apply, as an earlier apply of
// the patch would have, and returns the object as it is then.
func applyForReal(t *testing.T, c *connection.Client, live *unstructured.Unstructured, patch string) *unstructured.Unstructured {
	t.Helper()
	out, err := serverApply(t, c, live, obj(t, patch), false)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return out
}

// assertSameAt compares Merge's prediction with the server's result at each
// path.
func assertSameAt(t *testing.T, predicted, applied map[string]any, paths ...string) {
	t.Helper()
	for _, path := range paths {
		p, a := get(t, predicted, path), get(t, applied, path)
		if !sameJSON(t, p, a) {
			t.Errorf("%s:\nMerge:  %s\nserver: %s", path, jsonKey(normal(t, p)), jsonKey(normal(t, a)))
		}
	}
}

func TestClusterDeploymentListsAgainstDryRun(t *testing.T) {
	c := connectiontest.Local(t)
	typ, err := Load(c.Discovery, deploymentGVK)
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("merge-lists-%d", time.Now().UnixNano())
	create(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	live := create(t, c, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: `+ns+`, finalizers: [example.com/a, example.com/b]}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      tolerations:
      - {key: a, operator: Exists}
      - {key: b, operator: Equal, value: x, effect: NoSchedule}
      containers:
      - name: app
        image: app:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        ports: [{containerPort: 80, name: http}, {containerPort: 53, protocol: UDP}]
      - {name: sidecar, image: sidecar:1}
      volumes:
      - {name: shared, configMap: {name: shared-config}}
`)
	t.Cleanup(func() { releaseFinalizers(t, c, live) })
	live = applyForReal(t, c, live, `
spec: {template: {spec: {volumes: [{name: mine, configMap: {name: mine-config}}]}}}`)

	containers := "spec.template.spec.containers"
	volumes := "spec.template.spec.volumes"
	patch := obj(t, `
metadata: {finalizers: [example.com/c, example.com/a]}
spec:
  template:
    spec:
      tolerations: [{key: c, operator: Exists}]
      containers:
      - name: app
        env: [{name: B, value: changed}, {name: C, value: "3"}, {name: A, value: "1"}]
        ports: [{containerPort: 80, name: web}, {containerPort: 80, protocol: UDP, name: quic}]
      - {name: extra, image: extra:1}
      volumes:
      - {name: mine, secret: {secretName: mine-secret, defaultMode: 420}}
`)
	predicted, err := Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	dryRun := dryRunApply(t, c, live, patch)
	applied := dryRun.Object

	// The server defaults the fields of a new container (imagePullPolicy...),
	// which Merge does not predict: containers are compared on the fields the
	// patch and the live object give.
	assertSame(t, pick(get(t, predicted, containers), "name", "image", "env", "ports"),
		pick(get(t, applied, containers), "name", "image", "env", "ports"))
	assertSameAt(t, predicted, applied, "metadata.finalizers", "spec.template.spec.tolerations", volumes)

	// And what the server did is what each kind of list is meant to do.
	for path, want := range map[string]string{
		// list-map by name: new elements before the shared one they precede
		// in the patch, the order of shared ones the patch's.
		containers + "[name=app].env": `[{name: B, value: changed}, {name: C, value: "3"}, {name: A, value: "1"}]`,
		// list-map by containerPort and protocol: {containerPort: 80} is the
		// TCP port, and UDP 80 another element.
		containers + "[name=app].ports": `[{containerPort: 80, protocol: TCP, name: web}, {containerPort: 53, protocol: UDP}, ` +
			`{containerPort: 80, protocol: UDP, name: quic}]`,
		// set: the union, a new value before the shared one that follows it.
		"metadata.finalizers": `[example.com/c, example.com/a, example.com/b]`,
		// atomic list: replaced whole.
		"spec.template.spec.tolerations": `[{key: c, operator: Exists}]`,
		// retainKeys: the volume the manager switched from configMap to
		// secret has no configMap left; the other manager's volume is kept.
		volumes: `[{name: shared, configMap: {name: shared-config, defaultMode: 420}}, ` +
			`{name: mine, secret: {secretName: mine-secret, defaultMode: 420}}]`,
	} {
		assertSame(t, get(t, applied, path), obj(t, "v: "+want)["v"])
	}
	assertPathsAreManaged(t, patch, typ, dryRun)

	// Switching the other manager's volume: Server-Side Apply keeps the
	// configMap it owns, and then refuses two volume sources. Merge gives the
	// volume the patch describes, as retainKeys means it.
	patch = obj(t, `spec: {template: {spec: {volumes: [{name: shared, secret: {secretName: shared-secret}}]}}}`)
	predicted, err = Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, get(t, predicted, volumes+"[name=shared]"), obj(t, `{name: shared, secret: {secretName: shared-secret}}`))
	if _, err := serverApply(t, c, live, patch, true); err == nil || !strings.Contains(err.Error(), "may not specify more than 1 volume type") {
		t.Errorf("the server's dry run of switching another manager's volume: %v, want it refused for two volume sources", err)
	}
}

// releaseFinalizers lets a test's object be deleted.
func releaseFinalizers(t *testing.T, c *connection.Client, u *unstructured.Unstructured) {
	mapping, err := c.Mapping(u.GroupVersionKind())
	if err != nil {
		t.Error(err)
		return
	}
	_, err = c.Resource(mapping, u.GetNamespace()).Patch(context.Background(), u.GetName(), ktypes.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Errorf("releasing the finalizers of %s: %v", u.GetName(), err)
	}
}

func TestClusterCustomResourceListsAgainstDryRun(t *testing.T) {
	c := connectiontest.Local(t)
	group := fmt.Sprintf("l%d.merge.k8sconnect.test", time.Now().UnixNano())
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}
	create(t, c, fixtures.CRD(group, "Gadget", fixtures.ListKinds+`source: &source
  type: object
  properties:
    git: {type: object, properties: {url: {type: string}}}
    oci: {type: object, properties: {ref: {type: string}}}
mirror: *source
`))
	typ := loadPublished(t, c, gvk)
	if m, err := typ.Lookup(objectpath.MustParse("spec.rules")); err != nil || m.ListType != "atomic" {
		t.Fatalf("spec.rules: %+v, %v; want an atomic list", m, err)
	}

	ns := fmt.Sprintf("merge-crd-lists-%d", time.Now().UnixNano())
	create(t, c, `{apiVersion: v1, kind: Namespace, metadata: {name: `+ns+`}}`)
	live := create(t, c, `
apiVersion: `+group+`/v1
kind: Gadget
metadata: {name: g, namespace: `+ns+`}
spec:
  members: [{name: a, role: leader, weight: 1}, {name: b, role: follower, weight: 1}]
  ports: [{name: web, port: 80}]
  tags: [red, green]
  rules: [{name: r1, action: allow}, {name: r2, action: deny}]
  mirror: {git: {url: "https://example.com/mirror.git"}}
`)
	live = applyForReal(t, c, live, `spec: {source: {git: {url: "https://example.com/source.git"}}}`)

	patch := obj(t, `
spec:
  members: [{name: c, role: follower}, {name: a, weight: 2}]
  ports: [{name: www, port: 80}, {name: dns, port: 53, protocol: UDP}]
  tags: [blue, red]
  rules: [{name: r3, action: allow}]
  source: {oci: {ref: "example.com/source:1"}}
  mirror: {oci: {ref: "example.com/mirror:1"}}
`)
	predicted, err := Merge(live.Object, patch, typ, testManager)
	if err != nil {
		t.Fatal(err)
	}
	dryRun := dryRunApply(t, c, live, patch)
	applied := dryRun.Object
	assertSameAt(t, predicted, applied, "spec")
	assertSame(t, get(t, applied, "spec"), obj(t, `
# list-map by name: c before the shared a it precedes in the patch.
members: [{name: c, role: follower}, {name: a, role: leader, weight: 2}, {name: b, role: follower, weight: 1}]
# list-map by port and protocol: {port: 80} is the TCP port (the default).
ports: [{name: www, port: 80, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]
# set: the union, in the server's order.
tags: [blue, red, green]
# atomic list of objects: replaced whole, not merged by name.
rules: [{name: r3, action: allow}]
# The manager applied source.git before and leaves it out now: pruned.
source: {oci: {ref: "example.com/source:1"}}
# Another manager owns mirror.git: a custom resource has no retainKeys, so
# the server keeps it, and so does Merge.
mirror: {git: {url: "https://example.com/mirror.git"}, oci: {ref: "example.com/mirror:1"}}
`))
	assertPathsAreManaged(t, patch, typ, dryRun)
}
