package merge

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Prune drops exactly the fields the kind's schema does not declare, at any
// depth (in objects, in list elements, in metadata), keeps what a map or a
// field that preserves unknown fields accepts whatever its key, leaves a
// value of the wrong shape for the server to refuse, and names each field
// it dropped by a path that reads back to it.
func TestPrune(t *testing.T) {
	for _, tc := range []struct {
		name string
		gvk  schema.GroupVersionKind
		in   string
		// want is the object after Prune; dropped, what it returns.
		want    string
		dropped []string
	}{
		{
			name: "nothing unknown",
			gvk:  deploymentGVK,
			in: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}, annotations: {note: x}}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: app, image: app:1, env: [{name: A, value: "1"}]}]
`,
			want: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}, annotations: {note: x}}
spec:
  replicas: 2
  template:
    spec:
      containers: [{name: app, image: app:1, env: [{name: A, value: "1"}]}]
`,
		},
		{
			name:    "a top-level field",
			gvk:     deploymentGVK,
			in:      `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, color: blue, spec: {replicas: 1}}`,
			want:    `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 1}}`,
			dropped: []string{"color"},
		},
		{
			name: "in a list element, at two depths, the siblings kept",
			gvk:  deploymentGVK,
			in: `
spec:
  template:
    spec:
      containers:
      - {name: app, image: app:1, colour: red}
      - name: side
        image: side:1
        env: [{name: A, value: "1", secret: true}, {name: B, value: "2"}]
`,
			want: `
spec:
  template:
    spec:
      containers:
      - {name: app, image: app:1}
      - name: side
        image: side:1
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
`,
			dropped: []string{"spec.template.spec.containers[0].colour", "spec.template.spec.containers[1].env[0].secret"},
		},
		{
			name: "in metadata and beside it, in sorted order",
			gvk:  deploymentGVK,
			in: `
metadata: {name: web, owner: me, labels: {app.kubernetes.io/name: web, anything-goes: "yes"}}
spec: {replicas: 1, zeta: 1, alpha: 2}
`,
			want: `
metadata: {name: web, labels: {app.kubernetes.io/name: web, anything-goes: "yes"}}
spec: {replicas: 1}
`,
			dropped: []string{"metadata.owner", "spec.alpha", "spec.zeta"},
		},
		{
			name:    "a key that is not a plain name",
			gvk:     deploymentGVK,
			in:      `{metadata: {name: web}, spec: {"example.com/colour": red, "a b": 1}}`,
			want:    `{metadata: {name: web}, spec: {}}`,
			dropped: []string{`spec["a b"]`, `spec["example.com/colour"]`},
		},
		{
			name: "preserve-unknown-fields keeps everything under it; a map keeps any key",
			gvk:  widgetGVK,
			in: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  extra: {anything: {nested: [1, {deep: true}]}, more: x}
  settings: {whatever: "1", other: "2"}
  members: [{name: a, role: r, colour: red}]
  unknown: {a: 1}
`,
			want: `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  extra: {anything: {nested: [1, {deep: true}]}, more: x}
  settings: {whatever: "1", other: "2"}
  members: [{name: a, role: r}]
`,
			dropped: []string{"spec.members[0].colour", "spec.unknown"},
		},
		{
			name: "a value of the wrong shape is left to the server",
			gvk:  deploymentGVK,
			in: `
spec:
  replicas: {not: a number}
  template: [not, an, object]
  selector: just-text
`,
			want: `
spec:
  replicas: {not: a number}
  template: [not, an, object]
  selector: just-text
`,
		},
		{
			name:    "a null unknown field goes too",
			gvk:     deploymentGVK,
			in:      `{metadata: {name: web}, color: null}`,
			want:    `{metadata: {name: web}}`,
			dropped: []string{"color"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ := fixtureType(t, tc.gvk)
			original := obj(t, tc.in)
			got := obj(t, tc.in)
			dropped := Prune(got, typ)
			assertSame(t, got, obj(t, tc.want))
			if !slices.Equal(dropped, tc.dropped) {
				t.Errorf("dropped %q, want %q", dropped, tc.dropped)
			}
			// Each path names the field it dropped: it reads in the object
			// as given, and no longer in the pruned one.
			for _, d := range dropped {
				p, err := objectpath.Parse(d)
				if err != nil {
					t.Errorf("dropped %q is not a path: %v", d, err)
					continue
				}
				if _, ok := p.Get(original); !ok {
					t.Errorf("dropped %q names no field of the object as given", d)
				}
				if _, ok := p.Get(got); ok {
					t.Errorf("dropped %q is still in the pruned object", d)
				}
			}
		})
	}
}
