package object_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/otherproviders"
)

// movedObject is one object a move test makes as another provider would,
// and the k8sconnect_object (name, for_each key) it moves to.
type movedObject struct {
	resource, key string
	gvr           schema.GroupVersionResource
	namespace     string
	body          string
}

func (m movedObject) name(t *testing.T) string {
	t.Helper()
	obj := m.object(t)
	return obj.GetName()
}

func (m movedObject) object(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(m.body), &u.Object); err != nil {
		t.Fatal(err)
	}
	return &u
}

// ctyType is the type of v as Terraform writes a dynamic value's type in
// state: what kubernetes_manifest's manifest and object hold beside values.
func ctyType(v any) any {
	switch x := v.(type) {
	case map[string]any:
		fields := map[string]any{}
		for k, e := range x {
			fields[k] = ctyType(e)
		}
		return []any{"object", fields}
	case []any:
		elems := make([]any, len(x))
		for i, e := range x {
			elems[i] = ctyType(e)
		}
		return []any{"tuple", elems}
	case bool:
		return "bool"
	case float64, int64, json.Number:
		return "number"
	}
	return "string"
}

// A Deployment, a cluster-scoped ClusterRole, a CRD with a custom resource of
// its kind, and a for_each of 50 ConfigMaps move in place from
// kubernetes_manifest and from kubectl_manifest: one plan that replaces
// nothing, every UID kept, k8sconnect owning what the configuration sets, the
// previous managers letting go of it, and an empty plan after. The states
// are written as those providers write them (stand-ins at their real schema
// versions, otherproviders); neither provider's binary is built here.
func TestAccObject_moveBeyondConfigMaps(t *testing.T) {
	for _, from := range []string{"kubernetes_manifest", "kubectl_manifest"} {
		t.Run(from, func(t *testing.T) {
			t.Parallel()
			ns, conn := acctest.Namespace(t), acctest.Connection(t)
			group := acctest.Name("g") + ".move.k8sconnect.test"
			widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
			objects := []movedObject{
				{resource: "web", gvr: deployments, namespace: ns, body: fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\n"+
					"metadata: {name: web, namespace: %s}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n"+
					"  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: nginx:1.27}]}\n", ns)},
				{resource: "reader", gvr: clusterRoles, body: fmt.Sprintf(
					"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: %s-reader}\n"+
						"rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get, list]}]\n", ns)},
				{resource: "crd", gvr: crds, body: fixtures.CRD(group, "Widget", "size: {type: integer}")},
				{resource: "widget", gvr: widgets, namespace: ns, body: fmt.Sprintf(
					"apiVersion: %s/v1\nkind: Widget\nmetadata: {name: w1, namespace: %s}\nspec: {size: 3}\n", group, ns)},
			}
			for i := range 50 {
				objects = append(objects, movedObject{resource: "settings", key: fmt.Sprintf("cm-%02d", i), gvr: configMaps,
					namespace: ns, body: fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%02d, namespace: %s}\n"+
						"data: {index: %q}\n", i, ns, fmt.Sprint(i))})
			}

			uids := map[string]string{}
			resources := map[string]*acctest.StateResource{}
			var order []string
			for _, o := range objects {
				live := createAs(t, from, o)
				uids[o.resource+"/"+o.key] = string(live.GetUID())
				r, ok := resources[o.resource]
				if !ok {
					r = &acctest.StateResource{Type: from, Name: o.resource}
					resources[o.resource] = r
					order = append(order, o.resource)
				}
				r.Instances = append(r.Instances, acctest.StateInstance{Key: o.key, Attributes: stateOf(t, from, o, live)})
			}
			var all []acctest.StateResource
			for _, name := range order {
				all = append(all, *resources[name])
			}

			w := acctest.NewWorkdir(t)
			switch from {
			case "kubernetes_manifest":
				w.UseStandIn(otherproviders.Kubernetes)
				w.WriteStates(otherproviders.Kubernetes.Address, otherproviders.Kubernetes.Version, all...)
			default:
				w.UseStandIn(otherproviders.Kubectl)
				w.WriteStates(otherproviders.Kubectl.Address, otherproviders.Kubectl.Version, all...)
			}
			var config strings.Builder
			settings := map[string]string{}
			for _, o := range objects {
				if o.key != "" {
					settings[o.key] = o.body
					continue
				}
				depends := ""
				if o.resource == "widget" {
					depends = "depends_on = [k8sconnect_object.crd]"
				}
				fmt.Fprintf(&config, "moved {\n  from = %s.%s\n  to   = k8sconnect_object.%s\n}\n"+
					"resource \"k8sconnect_object\" %q {\n  yaml_body = %q\n  %s\n  %s\n}\n",
					from, o.resource, o.resource, o.resource, o.body, depends, conn)
			}
			encoded, err := json.Marshal(settings)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&config, "moved {\n  from = %s.settings\n  to   = k8sconnect_object.settings\n}\n"+
				"resource \"k8sconnect_object\" \"settings\" {\n  for_each  = jsondecode(%q)\n  yaml_body = each.value\n  %s\n}\n",
				from, string(encoded), conn)
			w.Write(config.String())
			w.Cleanup()

			plan := w.Plan()
			if plan.Err != nil {
				t.Fatalf("plan after the move: %v\n%s", plan.Err, plan.Output)
			}
			if add, _, remove := plan.Changes(); add != 0 || remove != 0 {
				t.Fatalf("the move planned %d to add and %d to destroy; want updates in place\n%s", add, remove, plan.Output)
			}
			w.MustApply()
			if got := len(w.StateList()); got != len(objects) {
				t.Errorf("state holds %d instances after the move, want %d", got, len(objects))
			}
			for _, o := range objects {
				live := acctest.MustGet(t, o.gvr, o.namespace, o.name(t))
				if got := string(live.GetUID()); got != uids[o.resource+"/"+o.key] {
					t.Errorf("%s %s was replaced: UID %s -> %s", o.resource, o.key, uids[o.resource+"/"+o.key], got)
				}
				if !slices.Contains(acctest.Managers(live), "k8sconnect") {
					t.Errorf("%s %s is not managed by k8sconnect after the move: %v", o.resource, o.key, acctest.Managers(live))
				}
			}
			web := acctest.MustGet(t, deployments, ns, "web")
			previous := map[string]string{"kubernetes_manifest": "Terraform", "kubectl_manifest": "kubectl-client-side-apply"}[from]
			if owns(t, web, previous, "spec", "replicas") {
				t.Errorf("%s still co-owns the Deployment's spec.replicas after the move", previous)
			}
			w.MustPlanNoChanges()
		})
	}
}

// createAs makes o as the provider from would have: kubernetes_manifest by
// Server-Side Apply under field manager Terraform, kubectl_manifest by a
// client-side apply (an Update by kubectl-client-side-apply, with the
// last-applied annotation). A custom resource waits for its CRD.
func createAs(t *testing.T, from string, o movedObject) *unstructured.Unstructured {
	t.Helper()
	obj := o.object(t)
	ri := acctest.Dynamic(t).Resource(o.gvr)
	var client dynamic.ResourceInterface = ri
	if o.namespace != "" {
		client = ri.Namespace(o.namespace)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var live *unstructured.Unstructured
		var err error
		if from == "kubernetes_manifest" {
			live, err = client.Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "Terraform", Force: true})
		} else {
			last, _ := json.Marshal(obj.Object)
			withLast := obj.DeepCopy()
			withLast.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(last)})
			live, err = client.Create(context.Background(), withLast, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
		}
		if err == nil {
			return live
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "could not find the requested resource") {
			t.Fatalf("creating %s as %s would: %v", o.resource, from, err)
		}
		time.Sleep(250 * time.Millisecond) // the CRD is not Established yet
	}
}

// stateOf is the state the provider from keeps for o once created.
func stateOf(t *testing.T, from string, o movedObject, live *unstructured.Unstructured) map[string]any {
	t.Helper()
	obj := o.object(t)
	if from == "kubernetes_manifest" {
		wrapped := map[string]any{"value": obj.Object, "type": ctyType(obj.Object)}
		return kubernetesManifestState(wrapped, wrapped)
	}
	gvk := obj.GroupVersionKind()
	return map[string]any{
		"id": apiPath(o, obj.GetName()), "yaml_body": o.body, "yaml_body_parsed": o.body,
		"yaml_incluster": "hash", "live_manifest_incluster": "hash", "api_version": gvk.GroupVersion().String(),
		"kind": gvk.Kind, "name": obj.GetName(), "namespace": nilIfEmpty(o.namespace), "override_namespace": nil,
		"uid": string(live.GetUID()), "live_uid": string(live.GetUID()), "sensitive_fields": nil, "ignore_fields": nil,
		"force_new": false, "server_side_apply": false, "field_manager": "kubectl", "force_conflicts": false,
		"apply_only": false, "validate_schema": true, "wait": nil, "wait_for_rollout": true,
	}
}

// apiPath is the object's URL path, which kubectl_manifest keeps as its id.
func apiPath(o movedObject, name string) string {
	base := "/apis/" + o.gvr.Group + "/" + o.gvr.Version
	if o.gvr.Group == "" {
		base = "/api/" + o.gvr.Version
	}
	if o.namespace != "" {
		base += "/namespaces/" + o.namespace
	}
	return base + "/" + o.gvr.Resource + "/" + name
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// A custom resource whose CRD was deleted outside (every object of its kind
// went with it) leaves state at refresh, as any object deleted outside does:
// the kind is gone, which a fresh discovery confirms.
func TestAccObject_customResourceGoneWithItsCRD(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	group := strings.ToLower(acctest.Name("gone")) + ".k8sconnect.test"
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = %[3]q
  %[4]s
}

resource "k8sconnect_object" "widget" {
  yaml_body = <<-YAML
    apiVersion: %[1]s/v1
    kind: Widget
    metadata: {name: one, namespace: %[2]s}
    spec: {size: 3}
  YAML
  depends_on = [k8sconnect_object.crd]
  %[4]s
}
`, group, ns, fixtures.CRD(group, "Widget", "size: {type: integer}"), acctest.Connection(t)))
	w.Cleanup()
	w.MustApply()
	if err := acctest.Dynamic(t).Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if obj, err := acctest.Get(t, crds, "", "widgets."+group); err == nil && obj == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deleted CRD is still there after a minute")
		}
	}
	if r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json"); r.Err != nil {
		t.Fatalf("refresh after the CRD was deleted: %v\n%s", r.Err, r.Output)
	}
	if got := w.StateList(); len(got) != 0 {
		t.Errorf("the CRD and its custom resource were deleted outside; state still lists %v", got)
	}
}
