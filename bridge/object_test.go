package bridge_test

// KubernetesObject behaviour a Pulumi user meets, with YAML programs the tests
// write: ignoreFields, replacement on an identity change, a CRD and its custom
// resource in one up, import, bad input and delete protection. Drift on owned fields is in
// ownership_test.go. Run with: go test ./bridge -run TestPulumiObject -v

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var (
	objConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	objDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// objects is a YAML program of KubernetesObjects on the shared cluster:
// resource name -> yamlBody, plus any extra properties or options.
type objects map[string]objectSpec

type objectSpec struct {
	body       string
	properties map[string]any
	options    map[string]any
}

func (o objects) program(t *testing.T) string {
	t.Helper()
	cluster := localcluster.Shared(t)
	resources := map[string]any{}
	for name, spec := range o {
		props := map[string]any{
			"clusterConnection": yamlConnection(cluster.Host, cluster.CAPEM, cluster.Token),
			"yamlBody":          spec.body,
		}
		for k, v := range spec.properties {
			props[k] = v
		}
		r := map[string]any{"type": "k8sconnect:KubernetesObject", "properties": props}
		if spec.options != nil {
			r["options"] = spec.options
		}
		resources[name] = r
	}
	b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-object", "runtime": "yaml", "resources": resources})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newObjectStack(t *testing.T, o objects) *pulumitest.Stack {
	t.Helper()
	skipShort(t)
	t.Parallel()
	return pulumitest.NewYAMLProgram(t, o.program(t))
}

// ignoreFields hands spec.replicas to an autoscaler: its changes are neither
// drift in a refreshed preview nor reverted by up, while a change of a field
// we still manage is.
func TestPulumiObject_ignoreFields(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("web")
	deployment := func(image string) objects {
		return objects{"web": {
			body: fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: %[3]q}]
`, name, ns, image),
			properties: map[string]any{"ignoreFields": []string{"spec.replicas"}},
		}}
	}
	stack := newObjectStack(t, deployment("nginx:1.27"))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 2})

	acctest.ApplyAs(t, "horizontal-pod-autoscaler", objDeployments, fmt.Sprintf(
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\nspec: {replicas: 5}\n", name, ns))
	res := stack.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 2})
	if strings.Contains(res.Log, "Drift") {
		t.Errorf("a refreshed preview reports drift on an ignored field:\n%s", res.Log)
	}

	stack.WriteYAML(deployment("nginx:1.28").program(t))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"same": 1, "update": 1})
	live := acctest.MustGet(t, objDeployments, ns, name)
	replicas, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	if replicas != 5 || len(containers) != 1 || containers[0].(map[string]any)["image"] != "nginx:1.28" {
		t.Fatalf("after the update: replicas %d (want the autoscaler's 5), containers %v (want nginx:1.28)", replicas, containers)
	}
}

// A new name is a new object: the preview plans a replacement, up creates the
// new ConfigMap and deletes the old one.
func TestPulumiObject_identityChangeReplaces(t *testing.T) {
	ns := acctest.Namespace(t)
	configMap := func(name string) objects {
		return objects{"settings": {body: fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", name, ns)}}
	}
	stack := newObjectStack(t, configMap("first"))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 2})
	first := acctest.MustGet(t, objConfigMaps, ns, "first")

	stack.WriteYAML(configMap("second").program(t))
	res := stack.Run(pulumitest.Preview, nil)
	expectChanges(t, res, map[string]int{"same": 1, "replace": 1})
	if still := acctest.MustGet(t, objConfigMaps, ns, "first"); still.GetUID() != first.GetUID() {
		t.Fatalf("the preview changed the cluster")
	}

	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"same": 1, "replace": 1})
	acctest.MustGet(t, objConfigMaps, ns, "second")
	if gone, err := acctest.Get(t, objConfigMaps, ns, "first"); err != nil || gone != nil {
		t.Fatalf("ConfigMap %s/first still exists after the replacement (err=%v)", ns, err)
	}
}

// A CRD and a custom resource of it in one program with no dependsOn: Pulumi
// may create them in any order, and the custom resource's create waits for
// its kind to be served.
func TestPulumiObject_crdAndCustomResource(t *testing.T) {
	group := strings.ToLower(acctest.Name("crd")) + ".k8sconnect.test"
	kind := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	stack := newObjectStack(t, objects{
		"gadget": {body: fmt.Sprintf("apiVersion: %s/v1\nkind: Gadget\nmetadata: {name: one}\nspec: {size: 3}\n", group)},
		"crd": {body: fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.%[1]s}
spec:
  group: %[1]s
  scope: Cluster
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group)},
	})
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 3})
	gadget := acctest.MustGet(t, kind, "", "one")
	if size, _, _ := unstructured.NestedInt64(gadget.Object, "spec", "size"); size != 3 {
		t.Fatalf("Gadget one has spec.size %d, want 3", size)
	}
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 3})
}

// An object made by someone else is imported by id (the resource option
// `import`, id format as for `terraform import`), then managed: the next up
// applies the program's change to the same object.
func TestPulumiObject_import(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("imported")
	existing := acctest.ApplyAs(t, "kubectl", objConfigMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", name, ns))
	configMap := func(greeting string) objects {
		return objects{"settings": {
			body:    fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  greeting: %s\n", name, ns, greeting),
			options: map[string]any{"import": "v1/ConfigMap/" + ns + "/" + name},
		}}
	}
	stack := newObjectStack(t, configMap("hello"))
	stack.SetEnv("KUBECONFIG", localcluster.Shared(t).KubeconfigPath)
	// The import reads the object through $KUBECONFIG; the same up then
	// applies the program's yamlBody through its own clusterConnection, which
	// takes ownership (an update, as after `terraform import`).
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 1, "import": 1, "update": 1})
	if got, _ := stack.Resources(); len(got) != 1 {
		t.Fatalf("state after the import = %q, want the ConfigMap", got)
	}
	if owner := acctest.MustGet(t, objConfigMaps, ns, name).GetAnnotations()["k8sconnect.io/owned-by"]; owner == "" {
		t.Fatalf("the imported ConfigMap does not carry k8sconnect.io/owned-by: the update did not take ownership")
	}
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 2})

	stack.WriteYAML(configMap("imported").program(t))
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"same": 1, "update": 1})
	live := acctest.MustGet(t, objConfigMaps, ns, name)
	if live.GetUID() != existing.GetUID() {
		t.Fatalf("the import replaced the ConfigMap: UID %s, was %s", live.GetUID(), existing.GetUID())
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "greeting"); got != "imported" {
		t.Fatalf("data.greeting = %q after the update, want %q", got, "imported")
	}
}

// yamlConnection is a YAML program's clusterConnection: a server, its CA and
// a bearer token kept secret in the stack's state.
func yamlConnection(host string, caPEM []byte, token string) map[string]any {
	return map[string]any{
		"host":                 host,
		"clusterCaCertificate": string(caPEM),
		"token":                map[string]any{"fn::secret": token},
	}
}

// Bad input fails `pulumi preview` with the provider's message, and nothing
// reaches the cluster: here a yamlBody with two objects and one with a field
// the kind does not have (the dry run validates strictly). The message names
// the property as a Pulumi program spells it.
func TestPulumiObject_badInputFailsPreview(t *testing.T) {
	ns := acctest.Namespace(t)
	cases := []struct {
		body, want string
	}{
		{fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: %[1]s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: %[1]s}\n", ns),
			"yamlBody holds 2 documents"},
		{fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: %s}\nspec: {replicas: 1}\n", ns),
			`yamlBody has an unknown field "spec": ConfigMap (apiVersion v1) has no such field`},
	}
	stack := newObjectStack(t, objects{"bad": {body: cases[0].body}})
	for i, c := range cases {
		if i > 0 {
			stack.WriteYAML(objects{"bad": {body: c.body}}.program(t))
		}
		res, err := stack.Try(pulumitest.Preview, nil)
		if err == nil || !strings.Contains(flat(res.Log), c.want) {
			t.Errorf("preview of %q: want a failure mentioning %q, got err=%v\n%s", c.body, c.want, err, res.Log)
		}
	}
	list, err := acctest.Clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			t.Errorf("preview of bad input left ConfigMap %s in the cluster", cm.Name)
		}
	}
}

// deleteProtection refuses `pulumi destroy` with what to do instead; the
// object stays until the protection is lifted.
func TestPulumiObject_deleteProtection(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("kept")
	configMap := func(protect bool) objects {
		return objects{"kept": {
			body:       fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", name, ns),
			properties: map[string]any{"deleteProtection": protect},
		}}
	}
	stack := newObjectStack(t, configMap(true))
	stack.Run(pulumitest.Up, nil)
	res, err := stack.Try(pulumitest.Destroy, nil)
	if err == nil || !strings.Contains(flat(res.Log), "has deleteProtection = true. Set it to false and apply") {
		t.Fatalf("destroy of a protected object: want the refusal, got err=%v\n%s", err, res.Log)
	}
	acctest.MustGet(t, objConfigMaps, ns, name)

	stack.WriteYAML(configMap(false).program(t))
	stack.Run(pulumitest.Up, nil)
	expectChanges(t, stack.Run(pulumitest.Destroy, nil), map[string]int{"delete": 2})
	if gone, err := acctest.Get(t, objConfigMaps, ns, name); err != nil || gone != nil {
		t.Fatalf("ConfigMap %s/%s still exists after destroy (err=%v)", ns, name, err)
	}
}
