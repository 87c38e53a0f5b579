package bridge_test

// Ownership safety as a Pulumi user meets it: one object declared
// twice, an object someone else re-created, a field handed over through
// ignoreFields, and a kubeconfig that now reaches another cluster. Run with:
// go test ./bridge -run TestPulumiSafety -v

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var objNamespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func declaredConfigMap(by, ns, name string) objectSpec {
	return objectSpec{body: fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {declared-by: %s}\n", name, ns, by)}
}

func objectsIn(t *testing.T, s *pulumitest.Stack) []string {
	t.Helper()
	var out []string
	resources, _ := s.Resources()
	for _, r := range resources {
		if strings.HasPrefix(r, "k8sconnect:index/kubernetesObject:KubernetesObject ") {
			out = append(out, strings.TrimPrefix(r, "k8sconnect:index/kubernetesObject:KubernetesObject "))
		}
	}
	return out
}

// Two declarations of one ConfigMap in one stack: exactly one create wins,
// the other fails naming the owner, and only the winner is in the stack. A
// second stack that declares the first stack's Namespace fails, and
// destroying that stack deletes nothing.
func TestPulumiSafety_sameObjectDeclaredTwice(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("twice")
	stack := newObjectStack(t, objects{"a": declaredConfigMap("a", ns, name), "b": declaredConfigMap("b", ns, name)})
	res, err := stack.Try(pulumitest.Up, nil)
	if err == nil {
		t.Fatalf("pulumi up of two declarations of one object succeeded:\n%s", res.Log)
	}
	in := objectsIn(t, stack)
	if len(in) != 1 {
		t.Fatalf("want exactly one of the two declarations in the stack, have %q", in)
	}
	live := acctest.MustGet(t, objConfigMaps, ns, name)
	if by := live.Object["data"].(map[string]any)["declared-by"]; by != in[0] {
		t.Fatalf("the object holds declared-by=%v; want the winner %s's", by, in[0])
	}
	owner := live.GetAnnotations()["k8sconnect.io/owned-by"]
	if !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), owner) {
		t.Fatalf("the loser's error does not name the object's owner %s:\n%v", owner, err)
	}

	shared := acctest.Name("shared")
	namespace := objectSpec{body: fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", shared)}
	first := pulumitest.NewYAMLProgram(t, objects{"ns": namespace}.program(t))
	first.Run(pulumitest.Up, nil)
	uid := acctest.UID(t, objNamespaces, "", shared)
	second := pulumitest.NewYAMLProgram(t, objects{"teamB": namespace}.program(t))
	if res, err := second.Try(pulumitest.Up, nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a second stack's up of the first stack's Namespace: err=%v\n%s", err, res.Log)
	}
	if in := objectsIn(t, second); len(in) != 0 {
		t.Fatalf("the refused declaration is in the second stack: %q", in)
	}
	second.Run(pulumitest.Destroy, nil)
	if got := acctest.UID(t, objNamespaces, "", shared); got != uid {
		t.Fatalf("destroying the second stack deleted or replaced the Namespace: UID %s -> %s", uid, got)
	}
}

// Someone deletes the ConfigMap and creates their own of the same name: a
// plain up (no refresh) refuses to touch it, and destroy leaves it in place.
func TestPulumiSafety_objectRecreatedBySomeoneElse(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("theirs")
	cm := func(greeting string) objects {
		return objects{"cm": {body: fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: %s}\n", name, ns, greeting)}}
	}
	stack := newObjectStack(t, cm("ours"))
	stack.Run(pulumitest.Up, nil)
	ours := acctest.UID(t, objConfigMaps, ns, name)
	if err := acctest.Clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	acctest.ApplyAs(t, "someone-else", objConfigMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: theirs}\n", name, ns))
	theirs := acctest.UID(t, objConfigMaps, ns, name)

	stack.WriteYAML(cm("changed").program(t))
	res, err := stack.Try(pulumitest.Up, nil)
	if err == nil || !strings.Contains(err.Error(), "not the object this resource manages") || !strings.Contains(err.Error(), ours) {
		t.Fatalf("pulumi up onto someone else's object: want a refusal naming our UID %s, got %v\n%s", ours, err, res.Log)
	}
	res = stack.Run(pulumitest.Destroy, nil)
	if !strings.Contains(res.Log, "Left in place") {
		t.Fatalf("destroy should say it left their object in place:\n%s", res.Log)
	}
	live := acctest.MustGet(t, objConfigMaps, ns, name)
	if string(live.GetUID()) != theirs || live.Object["data"].(map[string]any)["greeting"] != "theirs" {
		t.Fatalf("their ConfigMap was changed or deleted: UID %s (want %s), data %v", live.GetUID(), theirs, live.Object["data"])
	}
}

// A Deployment we created with replicas 4; ignoreFields now lists
// spec.replicas. The preview says it is handed over with its value, and up
// keeps 4 in the cluster.
func TestPulumiSafety_ignoreFieldsHandsOver(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("web")
	deployment := func(ignore []string) objects {
		spec := objectSpec{body: fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 4
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers: [{name: app, image: nginx:1.27}]
`, name, ns)}
		if ignore != nil {
			spec.properties = map[string]any{"ignoreFields": ignore}
		}
		return objects{"web": spec}
	}
	stack := newObjectStack(t, deployment(nil))
	stack.Run(pulumitest.Up, nil)
	stack.WriteYAML(deployment([]string{"spec.replicas"}).program(t))
	res := stack.Run(pulumitest.Preview, nil)
	if !strings.Contains(res.Log, "Fields handed over") || !strings.Contains(res.Log, "spec.replicas = 4") {
		t.Fatalf("the preview does not say spec.replicas is handed over with its value:\n%s", res.Log)
	}
	stack.Run(pulumitest.Up, nil)
	live := acctest.MustGet(t, objDeployments, ns, name)
	if replicas, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas"); replicas != 4 {
		t.Fatalf("replicas = %d after handing the field over, want 4 (kept)", replicas)
	}
}

// The stack's kubeconfig context is switched to another cluster: preview
// fails naming both clusters, the stack keeps the object, and nothing is
// created in the other cluster.
func TestPulumiSafety_switchedClusterIsRefused(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns, name := acctest.Namespace(t), acctest.Name("where")
	clusters := acctest.TwoClusterKubeconfig(t, ns)
	first, second := clusters.First, clusters.Second
	program := func(context string) string {
		b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-object", "runtime": "yaml", "resources": map[string]any{
			"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
				"clusterConnection": map[string]any{"kubeconfigFile": clusters.Kubeconfig, "context": context},
				"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns),
			}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stack := pulumitest.NewYAMLProgram(t, program("first"))
	stack.Run(pulumitest.Up, nil)
	stack.WriteYAML(program("second"))
	res, refusal := stack.Try(pulumitest.Preview, nil)
	if refusal == nil || !strings.Contains(refusal.Error(), "different cluster") {
		t.Fatalf("preview after switching the context: want a refusal naming both clusters, got %v\n%s", refusal, res.Log)
	}
	for _, c := range []*localcluster.Cluster{first, second} {
		ks, err := kubernetes.NewForConfigOrDie(c.RESTConfig()).CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(refusal.Error(), string(ks.UID)) {
			t.Fatalf("the refusal does not name cluster %s:\n%v", ks.UID, refusal)
		}
	}
	if in := objectsIn(t, stack); len(in) != 1 {
		t.Fatalf("the stack lost the object: %q", in)
	}
	if _, err := kubernetes.NewForConfigOrDie(second.RESTConfig()).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Fatal("the object was created in the second cluster")
	}
	stack.WriteYAML(program("first"))
}

// The token in the stack's kubeconfig expires: `pulumi refresh` keeps the
// object in the stack and says what to do, and with a renewed token a preview
// has nothing to do.
func TestPulumiSafety_expiredTokenKeepsState(t *testing.T) {
	skipShort(t)
	t.Parallel()
	c := localcluster.Shared(t)
	kc := acctest.NewTokenKubeconfig(t, c, c.Token)
	kubeconfig, writeToken := kc.Path, kc.Write
	ns, name := acctest.Namespace(t), acctest.Name("token")
	b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-object", "runtime": "yaml", "resources": map[string]any{
		"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns),
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stack := pulumitest.NewYAMLProgram(t, string(b))
	stack.Run(pulumitest.Up, nil)

	writeToken("expired-" + c.Token[:8])
	res, _ := stack.Try(pulumitest.Refresh, nil)
	kept := strings.Contains(res.Log, "state kept") && strings.Contains(res.Log, "401")
	if !kept && !strings.Contains(res.Log, "state not refreshed") {
		t.Fatalf("a refresh with an expired token should warn that state was kept, with the remedy:\n%s", res.Log)
	}
	if strings.Contains(res.Log, c.Token) {
		t.Fatal("the refresh output holds the token")
	}
	if in := objectsIn(t, stack); len(in) != 1 {
		t.Fatalf("the refresh with an expired token dropped the object from the stack: %q", in)
	}
	writeToken(c.Token)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 2})
}

// Two stacks create the same ConfigMap at the same moment: exactly one up
// succeeds, and the other fails naming the winner's id.
func TestPulumiSafety_twoStacksAtTheSameMoment(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("race")
	stacks := []*pulumitest.Stack{
		newObjectStack(t, objects{"racer0": declaredConfigMap("racer0", ns, name)}),
		pulumitest.NewYAMLProgram(t, objects{"racer1": declaredConfigMap("racer1", ns, name)}.program(t)),
	}
	errs := make([]error, len(stacks))
	logs := make([]string, len(stacks))
	var wg sync.WaitGroup
	for i, s := range stacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Try(pulumitest.Up, nil)
			errs[i], logs[i] = err, res.Log
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("want exactly one stack to create %s; errors %v / %v\n%s\n%s", name, errs[0], errs[1], logs[0], logs[1])
	}
	won := 0
	if errs[0] != nil {
		won = 1
	}
	live := acctest.MustGet(t, objConfigMaps, ns, name)
	owner := live.GetAnnotations()["k8sconnect.io/owned-by"]
	if by := live.Object["data"].(map[string]any)["declared-by"]; by != fmt.Sprintf("racer%d", won) {
		t.Fatalf("the object holds declared-by=%v, want the winner racer%d's", by, won)
	}
	if lost := errs[1-won].Error(); !strings.Contains(lost, "already exists") || !strings.Contains(lost, owner) {
		t.Fatalf("the losing up does not name the winner's id %s:\n%s", owner, lost)
	}
	if in := objectsIn(t, stacks[1-won]); len(in) != 0 {
		t.Fatalf("the losing stack holds %q", in)
	}
}
