package bridge_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
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
// namespace and a ConfigMap "greeting" in it) as a user does: the pulumi CLI in
// the example's directory, the plugin installed from its release archive and
// found through the SDK's metadata, and `pulumi config set` for every setting.
// It goes through the ConfigMap's life (preview, create, an empty preview, a
// preview of an in-place update of its data that --expect-no-changes refuses,
// the update, refresh, destroy) and checks the cluster after every step. Run
// one language with -run 'TestExamples/<language>'.
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
			t.Parallel() // each in its own directory, namespace and PULUMI_HOME
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
	var stack *pulumitest.Stack
	// Registered first, so it runs after the stack's own cleanups.
	t.Cleanup(func() { expectCleanProject(t, lang, stack) })
	stack = pulumitest.NewWithoutPlugin(t, lang)
	namespace := fmt.Sprintf("pulumi-%s-%s", lang, stack.Name())
	const name = "greeting"
	for key, value := range map[string]string{
		"kubeconfigPath": cluster.KubeconfigPath,
		"context":        kubeContext,
		"namespace":      namespace,
		"greeting":       "first",
	} {
		stack.CLI("config", "set", key, value)
	}
	var logs []string
	run := func(op pulumitest.Operation, flags ...pulumitest.Flag) pulumitest.Result {
		t.Helper()
		res := stack.Run(op, nil, flags...)
		logs = append(logs, res.Log)
		return res
	}

	if lang != pulumitest.YAML {
		// The SDK's metadata alone names the plugin and its version, and where
		// to download it: with no plugin installed (the download fails here:
		// no such release is reachable), the engine says how to install it.
		res, err := stack.Try(pulumitest.Preview, nil)
		version := pulumitest.PluginVersion(t)
		if err == nil {
			t.Fatalf("pulumi preview without the plugin succeeded:\n%s", res.Log)
		}
		install := "`pulumi plugin install resource k8sconnect v" + version + " --server " + bridge.PluginDownloadURL + "`"
		for _, want := range []string{"resource plugin 'pulumi-resource-k8sconnect' at version v" + version, install} {
			if !strings.Contains(res.Log, want) {
				t.Errorf("pulumi preview without the plugin: the output lacks %q:\n%s", want, res.Log)
			}
		}
		if _, err := cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("namespace %s after a failed preview: %v", namespace, err)
		}
	}
	stack.InstallPlugin()

	// Preview a create: nothing is applied.
	res := run(pulumitest.Preview)
	expectChanges(t, res, map[string]int{"create": 3})
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace %s after preview: %v", namespace, err)
	}

	// Create. The counts of changes include the stack itself.
	res = run(pulumitest.Up)
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

	// Nothing to change: the preview's own check fails on any change.
	res = run(pulumitest.Preview, pulumitest.ExpectNoChanges)
	expectChanges(t, res, map[string]int{"same": 3})

	// Preview a change of the data: an in-place update, and nothing applied yet.
	stack.CLI("config", "set", "greeting", "second")
	res = run(pulumitest.Preview)
	expectChanges(t, res, map[string]int{"same": 2, "update": 1})
	expectGreeting(t, getConfigMap(t, cs, namespace, name), "first")
	// ...which a preview that expects no changes refuses.
	if res, err := stack.Try(pulumitest.Preview, nil, pulumitest.ExpectNoChanges); err == nil {
		t.Fatalf("a preview with --expect-no-changes passed while an update is pending:\n%s", res.Log)
	} else if !strings.Contains(err.Error(), "no changes were expected") {
		t.Fatalf("a preview with --expect-no-changes failed, but not for the pending update: %v", err)
	}

	// Update: same object (UID), new data.
	res = run(pulumitest.Up)
	expectChanges(t, res, map[string]int{"same": 2, "update": 1})
	updated := getConfigMap(t, cs, namespace, name)
	expectGreeting(t, updated, "second")
	if updated.UID != created.UID {
		t.Errorf("the update replaced the ConfigMap: UID %s, was %s", updated.UID, created.UID)
	}

	// Refresh reads the objects back and finds nothing to change.
	res = run(pulumitest.Refresh)
	expectChanges(t, res, map[string]int{"same": 3})
	expectGreeting(t, getConfigMap(t, cs, namespace, name), "second")

	// Destroy: both objects are gone when it returns.
	res = run(pulumitest.Destroy)
	expectChanges(t, res, map[string]int{"delete": 3})
	_, err = cs.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	expectGone(t, "ConfigMap "+namespace+"/"+name, err)
	got, err := cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if err == nil && got.UID != ns.UID {
		t.Fatalf("namespace %s was recreated after destroy", namespace)
	}
	expectGone(t, "namespace "+namespace, err)

	// The language host and the plugin are where the CLI expects them: it
	// would otherwise warn that it uses one "from $PATH".
	for _, log := range logs {
		if strings.Contains(log, "from $PATH") {
			t.Errorf("pulumi warned about a plugin on PATH:\n%s", log)
		}
	}
}

// expectCleanProject checks, once the stack is gone, that running the example
// left its directory as git has it: no stack config file (even an ignored
// one), nothing else untracked or changed.
func expectCleanProject(t *testing.T, lang pulumitest.Language, stack *pulumitest.Stack) {
	t.Helper()
	if stack == nil {
		return
	}
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(repo, "examples", "pulumi-"+string(lang))
	if _, err := os.Stat(filepath.Join(dir, "Pulumi."+stack.Name()+".yaml")); !os.IsNotExist(err) {
		t.Errorf("the stack's config file is left in %s (%v)", dir, err)
	}
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	if len(out) > 0 {
		t.Errorf("running the example changed %s:\n%s", dir, out)
	}
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
