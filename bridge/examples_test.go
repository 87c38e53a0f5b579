package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { localcluster.Main(m) }

// skipShort keeps the Pulumi suites out of `go test -short`, which CI does
// not use: they build the provider plugin and run pulumi.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the provider plugin and runs pulumi: not in -short")
	}
}

// TestExamples runs each language's quickstart (examples/pulumi-<language>: a
// namespace and a ConfigMap "greeting" in it) through the ConfigMap's life:
// preview, create, an empty preview, preview and apply a change of its data,
// refresh, destroy, and checks the cluster after every step. Run one language
// with -run 'TestExamples/<language>'.
func TestExamples(t *testing.T) {
	skipShort(t)
	// The contexts of the local cluster's kubeconfig: a bearer token and a
	// client certificate. Each language uses one, so both paths are covered.
	contexts := map[pulumitest.Language]string{
		pulumitest.YAML:       localcluster.TokenContext,
		pulumitest.Go:         localcluster.CertContext,
		pulumitest.TypeScript: localcluster.TokenContext,
		pulumitest.Python:     localcluster.CertContext,
		pulumitest.Java:       localcluster.CertContext,
	}
	for _, lang := range pulumitest.Languages {
		t.Run(string(lang), func(t *testing.T) {
			testQuickstart(t, lang, contexts[lang])
		})
	}
}

func testQuickstart(t *testing.T, lang pulumitest.Language, kubeContext string) {
	cluster := localcluster.Shared(t)
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	stack := pulumitest.New(t, lang)
	namespace := fmt.Sprintf("pulumi-%s-%s", lang, stack.Name())
	const name = "greeting"

	// A preview of the new stack plans three creates (the counts of changes
	// include the stack itself) and creates nothing.
	res := stack.Run(pulumitest.Preview, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(kubeContext),
		"namespace":      pulumitest.Plain(namespace),
		"greeting":       pulumitest.Plain("first"),
	})
	expectChanges(t, res, map[string]int{"create": 3})
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("after the preview, namespace %s: %v; want NotFound", namespace, err)
	}

	// Create.
	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": 3})
	if got, want := res.Outputs["configmap"], namespace+"/"+name; got != want {
		t.Errorf("output configmap = %v, want %q", got, want)
	}
	ns, err := cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s: %v", namespace, err)
	}
	created := getConfigMap(t, cs, namespace, name)
	expectGreeting(t, created, "first")

	// Nothing changed since: a preview that expects no changes passes.
	res = stack.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
	expectChanges(t, res, map[string]int{"same": 3})

	// Preview a change of the data: an in-place update, and nothing applied yet.
	res = stack.Run(pulumitest.Preview, pulumitest.Config{"greeting": pulumitest.Plain("second")})
	expectChanges(t, res, map[string]int{"same": 2, "update": 1})
	expectGreeting(t, getConfigMap(t, cs, namespace, name), "first")
	// ...which a preview that expects no changes refuses.
	if res, err := stack.Try(pulumitest.Preview, nil, pulumitest.ExpectNoChanges); err == nil {
		t.Fatalf("a preview with --expect-no-changes passed while an update is pending:\n%s", res.Log)
	} else if !strings.Contains(err.Error(), "no changes were expected") {
		t.Fatalf("a preview with --expect-no-changes failed, but not for the pending update: %v", err)
	}

	// Update: same object (UID), new data.
	res = stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"same": 2, "update": 1})
	updated := getConfigMap(t, cs, namespace, name)
	expectGreeting(t, updated, "second")
	if updated.UID != created.UID {
		t.Errorf("the update replaced the ConfigMap: UID %s, was %s", updated.UID, created.UID)
	}

	// Refresh reads the objects back and finds nothing to change.
	res = stack.Run(pulumitest.Refresh, nil)
	expectChanges(t, res, map[string]int{"same": 3})
	expectGreeting(t, getConfigMap(t, cs, namespace, name), "second")

	// Destroy: both objects are gone when it returns.
	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 3})
	_, err = cs.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	expectGone(t, "ConfigMap "+namespace+"/"+name, err)
	got, err := cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if err == nil && got.UID != ns.UID {
		t.Fatalf("namespace %s was recreated after destroy", namespace)
	}
	expectGone(t, "namespace "+namespace, err)
}

func expectChanges(t *testing.T, res pulumitest.Result, want map[string]int) {
	t.Helper()
	for op, n := range want {
		if res.Changes[op] != n {
			t.Fatalf("pulumi %s: %d %q, want %d (all changes: %v)\n%s", res.Operation, res.Changes[op], op, n, res.Changes, res.Log)
		}
	}
	for op, n := range res.Changes {
		if _, ok := want[op]; !ok && n != 0 {
			t.Fatalf("pulumi %s: unexpected %d %q (all changes: %v)\n%s", res.Operation, n, op, res.Changes, res.Log)
		}
	}
}

func getConfigMap(t *testing.T, cs kubernetes.Interface, namespace, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm
}

func expectGreeting(t *testing.T, cm *corev1.ConfigMap, want string) {
	t.Helper()
	if got := cm.Data["greeting"]; got != want {
		t.Fatalf("ConfigMap %s/%s data.greeting = %q, want %q", cm.Namespace, cm.Name, got, want)
	}
}

// expectGone checks the error of a Get after destroy: destroy waits for the
// deletion, so the object is gone at once.
func expectGone(t *testing.T, what string, err error) {
	t.Helper()
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatalf("%s: %v", what, err)
	default:
		t.Fatalf("%s still exists after destroy", what)
	}
}
