package merge

import (
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

const twoContainers = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.14
        ports: [{containerPort: 80, protocol: TCP, name: http}]
      - name: sidecar
        image: sidecar:v1
      tolerations:
      - {key: a, operator: Exists}
      - {key: b, operator: Equal, value: x, effect: NoSchedule}
`

func TestMergeKeepsSidecarWhenPatchingOneContainer(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), twoContainers, `
spec:
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.21
`)
	want := obj(t, twoContainers)
	c := want["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	c[0].(map[string]any)["image"] = "nginx:1.21"
	assertSame(t, got, want)
}

func TestMergeReplacesAtomicTolerations(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), twoContainers, `
spec:
  template:
    spec:
      tolerations:
      - {key: c, operator: Exists}
`)
	tol, _ := objectpath.MustParse("spec.template.spec.tolerations").Get(got)
	assertSame(t, tol, []any{map[string]any{"key": "c", "operator": "Exists"}})
	containers, _ := objectpath.MustParse("spec.template.spec.containers").Get(got)
	if n := len(containers.([]any)); n != 2 {
		t.Errorf("containers: %d, want the 2 live ones", n)
	}
}

func TestMergeNestedEnvByNameInsideContainerByName(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), `
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        - name: POD
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
      - name: other
        env: [{name: A, value: other}]
`, `
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - {name: B, value: changed}
        - {name: C, value: "3"}
        - {name: POD, value: literal, valueFrom: null}
`)
	// C comes before POD, as the server orders it: a new element goes before
	// the shared element that follows it in the patch.
	assertSame(t, got, obj(t, `
spec:
  template:
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: A, value: "1"}
        - {name: B, value: changed}
        - {name: C, value: "3"}
        - {name: POD, value: literal}
      - name: other
        env: [{name: A, value: other}]
`))
}

func TestMergeCRDListMapByKey(t *testing.T) {
	typ := fixtureType(t, widgetGVK)
	got := mustMerge(t, typ, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  members:
  - {name: a, role: leader, weight: 1}
  - {name: b, role: follower, weight: 1}
  steps: [one, two]
`, `
spec:
  members:
  - {name: b, weight: 5}
  - {name: c, role: follower}
  steps: [three]
`)
	assertSame(t, got, obj(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  members:
  - {name: a, role: leader, weight: 1}
  - {name: b, role: follower, weight: 5}
  - {name: c, role: follower}
  steps: [three]
`))
}

// Two-key list-maps match on both keys, and a key the patch leaves out is its
// schema default: {containerPort: 80} is the TCP port 80, while UDP 80 is another.
func TestMergeMultiKeyListMapWithDefaultedKey(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), twoContainers, `
spec:
  template:
    spec:
      containers:
      - name: nginx
        ports:
        - {containerPort: 80, hostPort: 8080}
        - {containerPort: 80, protocol: UDP, name: quic}
`)
	ports, _ := objectpath.MustParse("spec.template.spec.containers[name=nginx].ports").Get(got)
	assertSame(t, ports, obj(t, `
ports:
- {containerPort: 80, protocol: TCP, name: http, hostPort: 8080}
- {containerPort: 80, protocol: UDP, name: quic}
`)["ports"])

	got = mustMerge(t, fixtureType(t, widgetGVK), `
spec:
  ports: [{name: web, port: 80, protocol: TCP}]
`, `
spec:
  ports: [{name: www, port: 80}, {name: dns, port: 53, protocol: UDP}]
`)
	assertSame(t, got, obj(t, `
spec:
  ports: [{name: www, port: 80, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]
`))
}

func TestMergeSetUnion(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), `
metadata:
  finalizers: [example.com/a, example.com/b]
`, `
metadata:
  finalizers: [example.com/c, example.com/a]
`)
	// In the server's order: a new value goes before the shared value that
	// follows it in the patch.
	assertSame(t, got, obj(t, `
metadata:
  finalizers: [example.com/c, example.com/a, example.com/b]
`))

	got = mustMerge(t, fixtureType(t, widgetGVK), `spec: {tags: [red, green]}`, `spec: {tags: [blue, green]}`)
	assertSame(t, got, obj(t, `spec: {tags: [red, blue, green]}`))

	// The server refuses an applied set that gives a value twice.
	_, err := Merge(obj(t, `spec: {tags: [red, green]}`), obj(t, `spec: {tags: [blue, green, blue]}`), fixtureType(t, widgetGVK), testManager)
	if err == nil || !strings.Contains(err.Error(), `.spec.tags: duplicate entries for key [="blue"]`) {
		t.Errorf("a value given twice: %v", err)
	}
}

func TestMergeRetainKeys(t *testing.T) {
	typ := fixtureType(t, deploymentGVK)
	got := mustMerge(t, typ, `
spec:
  template:
    spec:
      volumes:
      - name: config
        configMap: {name: app-config, defaultMode: 420}
      - name: scratch
        emptyDir: {}
`, `
spec:
  template:
    spec:
      volumes:
      - name: config
        secret: {secretName: app-secret}
`)
	assertSame(t, got, obj(t, `
spec:
  template:
    spec:
      volumes:
      - name: config
        secret: {secretName: app-secret}
      - name: scratch
        emptyDir: {}
`))

	// Only the element's own keys are retained: the objects under them still
	// merge, so a patch of configMap.defaultMode keeps configMap.name.
	got = mustMerge(t, typ, `
spec:
  template:
    spec:
      volumes: [{name: config, configMap: {name: app-config, defaultMode: 420}}]
`, `
spec:
  template:
    spec:
      volumes: [{name: config, configMap: {defaultMode: 384}}]
`)
	v, _ := objectpath.MustParse("spec.template.spec.volumes[name=config]").Get(got)
	assertSame(t, v, map[string]any{"name": "config", "configMap": map[string]any{"name": "app-config", "defaultMode": 384}})

	// A field with patch strategy retainKeys (Deployment.spec.strategy).
	got = mustMerge(t, typ, `
spec:
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}
`, `
spec:
  strategy: {type: Recreate}
`)
	assertSame(t, got, obj(t, `spec: {strategy: {type: Recreate}}`))
}

func TestMergeAtomicMapReplacedGranularMapMerged(t *testing.T) {
	got := mustMerge(t, fixtureType(t, deploymentGVK), `
metadata:
  labels: {app: web, tier: front, team: a}
spec:
  selector: {matchLabels: {app: web, tier: front}}
  template:
    spec:
      nodeSelector: {disk: ssd, zone: a}
`, `
metadata:
  labels: {tier: back, team: null, new: "yes"}
spec:
  selector: {matchLabels: {app: web}}
  template:
    spec:
      nodeSelector: {zone: b}
`)
	assertSame(t, got, obj(t, `
metadata:
  labels: {app: web, tier: back, new: "yes"}
spec:
  selector: {matchLabels: {app: web}}
  template:
    spec:
      nodeSelector: {zone: b}
`))

	got = mustMerge(t, fixtureType(t, widgetGVK), `spec: {settings: {a: "1", b: "2"}, extra: {a: {x: 1}, b: 2}}`,
		`spec: {settings: {b: "3"}, extra: {a: {y: 2}}}`)
	assertSame(t, got, obj(t, `spec: {settings: {b: "3"}, extra: {a: {x: 1, y: 2}, b: 2}}`))
}

func TestMergeDirectives(t *testing.T) {
	typ := fixtureType(t, deploymentGVK)
	got := mustMerge(t, typ, twoContainers, `
metadata:
  labels: {$patch: replace, only: this}
spec:
  template:
    spec:
      containers:
      - {name: sidecar, $patch: delete}
      - {name: gone, $patch: delete}
`)
	if v, _ := objectpath.MustParse("metadata.labels").Get(got); !sameJSON(t, v, map[string]any{"only": "this"}) {
		t.Errorf("labels = %v", v)
	}
	c, _ := objectpath.MustParse("spec.template.spec.containers").Get(got)
	if n := len(c.([]any)); n != 1 {
		t.Errorf("containers after deleting sidecar: %v", c)
	}

	got = mustMerge(t, typ, twoContainers, `
spec:
  template:
    spec:
      containers:
      - $patch: replace
      - {name: only, image: only:1}
`)
	c, _ = objectpath.MustParse("spec.template.spec.containers").Get(got)
	assertSame(t, c, []any{map[string]any{"name": "only", "image": "only:1"}})

	got = mustMerge(t, typ, `
metadata: {finalizers: [a, b, c]}
spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}, replicas: 3}
`, `
metadata: {$deleteFromPrimitiveList/finalizers: [b], $setElementOrder/finalizers: [c, a]}
spec: {strategy: {$patch: delete}, replicas: null}
`)
	assertSame(t, got, obj(t, `{metadata: {finalizers: [a, c]}, spec: {}}`))

	got = mustMerge(t, typ, `
spec:
  template:
    spec:
      containers: [{name: app, image: a, args: [x]}]
`, `
spec:
  template:
    spec:
      containers: [{name: app, $retainKeys: [name, image], image: b}]
`)
	c, _ = objectpath.MustParse("spec.template.spec.containers").Get(got)
	assertSame(t, c, []any{map[string]any{"name": "app", "image": "b"}})
}

func sameJSON(t *testing.T, a, b any) bool {
	return jsonKey(normal(t, a)) == jsonKey(normal(t, b))
}

func TestMergeRefusesWhatTheSchemaDoesNot(t *testing.T) {
	typ := fixtureType(t, deploymentGVK)
	for _, tc := range []struct{ patch, want string }{
		{`spec: {replicaz: 2}`, `Deployment spec.replicaz: no such field in the schema`},
		{`spec: {replicas: {n: 2}}`, `Deployment spec.replicas: the patch gives an object where the schema expects a single value`},
		{`spec: {template: {spec: {containers: {name: x}}}}`, `spec.template.spec.containers: the patch gives an object where the schema expects a list`},
		{`spec: {template: {spec: {containers: [nginx]}}}`, `spec.template.spec.containers[0]: elements of this list are objects keyed by name, not nginx`},
		{`spec: {template: {spec: {tolerations: [{key: a, bogus: 1}]}}}`, `spec.template.spec.tolerations[0].bogus: no such field`},
		{`spec: {$patch: remove}`, `$patch is remove`},
		{`spec: {$foo: 1}`, `unknown patch directive $foo`},
	} {
		_, err := Merge(obj(t, twoContainers), obj(t, tc.patch), typ, testManager)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("patch %s: error %v, want %q", tc.patch, err, tc.want)
		}
	}
	// A list-map element with none of its keys, and no defaults for them.
	_, err := Merge(obj(t, `spec: {}`), obj(t, `spec: {members: [{role: x}]}`), fixtureType(t, widgetGVK), testManager)
	if err == nil || !strings.Contains(err.Error(), "sets none of the list's keys (name)") {
		t.Errorf("member without name: %v", err)
	}
}

func TestMergeLeavesItsArgumentsAlone(t *testing.T) {
	live, patch := obj(t, twoContainers), obj(t, `
metadata: {labels: {a: b}}
spec: {template: {spec: {containers: [{name: nginx, image: new}, {name: extra, image: e}]}}}
`)
	liveBefore, patchBefore := jsonKey(live), jsonKey(patch)
	out, err := Merge(live, patch, fixtureType(t, deploymentGVK), testManager)
	if err != nil {
		t.Fatal(err)
	}
	if jsonKey(live) != liveBefore || jsonKey(patch) != patchBefore {
		t.Error("Merge changed its arguments")
	}
	// The result shares nothing with them either.
	out["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[2].(map[string]any)["image"] = "x"
	out["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[1].(map[string]any)["image"] = "x"
	if jsonKey(live) != liveBefore || jsonKey(patch) != patchBefore {
		t.Error("the result aliases an argument")
	}
}
