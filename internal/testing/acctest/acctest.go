// Package acctest is what the acceptance tests of every resource share: the
// provider served in-process to a real terraform or tofu binary, the embedded
// cluster, and helpers that look at the cluster the way a user would.
//
// The engine is chosen by K8SCONNECT_ENGINE ("terraform", the default, or
// "tofu"); `make test` runs the same suites once with each.
package acctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
	"github.com/k8sconnect/k8sconnect/provider"
)

// Main is TestMain for acceptance test packages: it points terraform-plugin-testing
// at the chosen engine and runs the tests against the embedded cluster.
func Main(m *testing.M) {
	cliConfig, err := selectEngine()
	if err != nil {
		if cliConfig != "" {
			_ = os.Remove(cliConfig)
		}
		fmt.Fprintln(os.Stderr, "acctest:", err)
		os.Exit(1)
	}
	localcluster.Main(m, removeProviderBinary, func() { _ = os.Remove(cliConfig) })
}

// Engine is the binary the suite runs under: "terraform" or "tofu".
func Engine() string {
	if e := os.Getenv("K8SCONNECT_ENGINE"); e != "" {
		return e
	}
	return "terraform"
}

// selectEngine points terraform-plugin-testing at the chosen engine, with an
// empty CLI config file of its own, whose path it returns for removal.
func selectEngine() (string, error) {
	engine := Engine()
	if engine != "terraform" && engine != "tofu" {
		return "", fmt.Errorf("K8SCONNECT_ENGINE=%q: use terraform or tofu", engine)
	}
	bin, err := toolchain.Path(engine)
	if err != nil {
		return "", err
	}
	env := map[string]string{
		"TF_ACC":                "1",
		"TF_ACC_TERRAFORM_PATH": bin,
		"CHECKPOINT_DISABLE":    "1",
		// Examples declare source = "k8sconnect/k8sconnect"; register the
		// in-process provider under that namespace so they run unmodified.
		"TF_ACC_PROVIDER_NAMESPACE": "k8sconnect",
	}
	if engine == "tofu" {
		// tofu resolves a bare provider name to its own registry; the in-process
		// provider must be registered under the address tofu will look for.
		env["TF_ACC_PROVIDER_HOST"] = "registry.opentofu.org"
	}
	// An empty CLI config keeps the engine from warning that ~/.terraformrc is missing.
	rc, err := os.CreateTemp("", "k8sconnect-acc-*.tfrc")
	if err != nil {
		return "", err
	}
	rc.Close()
	env["TF_CLI_CONFIG_FILE"] = rc.Name()
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return rc.Name(), err
		}
	}
	return rc.Name(), nil
}

// Factories serves the provider in-process to the engine.
func Factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		provider.TypeName: providerserver.NewProtocol6WithError(provider.New("test")()),
	}
}

// Connection is an HCL cluster_connection attribute for the shared cluster,
// authenticating with the admin token.
func Connection(t testing.TB) string {
	c := localcluster.Shared(t)
	return fmt.Sprintf(`cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
  }`, c.Host, string(c.CAPEM), c.Token)
}

// KubeconfigConnection is an HCL cluster_connection that reads the shared
// cluster's kubeconfig file and selects context (empty: current-context).
func KubeconfigConnection(t testing.TB, context string) string {
	c := localcluster.Shared(t)
	if context == "" {
		return fmt.Sprintf("cluster_connection = {\n    kubeconfig = file(%q)\n  }", c.KubeconfigPath)
	}
	return fmt.Sprintf("cluster_connection = {\n    kubeconfig = file(%q)\n    context    = %q\n  }", c.KubeconfigPath, context)
}

// Name returns a unique, DNS-safe name with the given prefix.
func Name(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return strings.ToLower(prefix) + "-" + hex.EncodeToString(b)
}

// Namespace creates a fresh namespace for one test and deletes it afterwards.
func Namespace(t testing.TB) string {
	t.Helper()
	name := Name("t")
	cs := Clientset(t)
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// NamespaceToMake returns a fresh namespace name that does not exist yet, for
// a configuration that makes the namespace itself, and deletes whatever
// holds that name when the test ends.
func NamespaceToMake(t testing.TB) string {
	t.Helper()
	name := Name("fresh")
	cs := Clientset(t)
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// Clientset is a typed client for the shared cluster, for test set-up and checks.
func Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(localcluster.Shared(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Dynamic is a dynamic client for the shared cluster.
func Dynamic(t testing.TB) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(localcluster.Shared(t).RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// Get reads an object from the cluster; a missing object returns (nil, nil).
func Get(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	var ri dynamic.ResourceInterface = Dynamic(t).Resource(gvr)
	if namespace != "" {
		ri = Dynamic(t).Resource(gvr).Namespace(namespace)
	}
	obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// ApplyAs server-side applies manifest (YAML) with force under another field
// manager, the way kubectl, Helm or a controller would.
func ApplyAs(t testing.TB, manager string, gvr schema.GroupVersionResource, manifest string) *unstructured.Unstructured {
	t.Helper()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("ApplyAs: bad manifest: %v", err)
	}
	var ri dynamic.ResourceInterface = Dynamic(t).Resource(gvr)
	if ns := obj.GetNamespace(); ns != "" {
		ri = Dynamic(t).Resource(gvr).Namespace(ns)
	}
	out, err := ri.Apply(context.Background(), obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	if err != nil {
		t.Fatalf("ApplyAs %s: %v", manager, err)
	}
	return out
}

// PatchAs changes an object with a JSON merge patch under another field manager,
// the way `kubectl edit` or `kubectl scale` would (an Update, not an Apply).
func PatchAs(t testing.TB, manager string, gvr schema.GroupVersionResource, namespace, name, mergePatch string) {
	t.Helper()
	patchAs(t, manager, gvr, namespace, name, mergePatch)
}

// PatchStatusAs is PatchAs on the status subresource, as a controller reports
// on an object whose kind has one (where a patch of the object itself would
// leave status alone).
func PatchStatusAs(t testing.TB, manager string, gvr schema.GroupVersionResource, namespace, name, mergePatch string) {
	t.Helper()
	patchAs(t, manager, gvr, namespace, name, mergePatch, "status")
}

func patchAs(t testing.TB, manager string, gvr schema.GroupVersionResource, namespace, name, mergePatch string, subresource ...string) {
	t.Helper()
	var ri dynamic.ResourceInterface = Dynamic(t).Resource(gvr)
	if namespace != "" {
		ri = Dynamic(t).Resource(gvr).Namespace(namespace)
	}
	if _, err := ri.Patch(context.Background(), name, ktypes.MergePatchType, []byte(mergePatch), metav1.PatchOptions{FieldManager: manager}, subresource...); err != nil {
		t.Fatalf("patching %s as %s: %v", strings.Join(append([]string{name}, subresource...), "/"), manager, err)
	}
}

// ContainerEnv is a workload's container env as name -> value, and the
// container's image under "__image".
func ContainerEnv(obj *unstructured.Unstructured, container string) map[string]string {
	cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	out := map[string]string{}
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		if cm["name"] != container {
			continue
		}
		env, _ := cm["env"].([]any)
		for _, e := range env {
			em, _ := e.(map[string]any)
			name, _ := em["name"].(string)
			v, _ := em["value"].(string)
			out[name] = v
		}
		out["__image"] = fmt.Sprint(cm["image"])
	}
	return out
}

// MustGet reads an object that must be in the cluster.
func MustGet(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := Get(t, gvr, namespace, name)
	if err != nil || obj == nil {
		t.Fatalf("%s %s/%s is not in the cluster (err=%v)", gvr.Resource, namespace, name, err)
	}
	return obj
}

// UID is the UID of an object that must be in the cluster: what a test
// compares to prove an object was neither replaced nor recreated.
func UID(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) string {
	t.Helper()
	return string(MustGet(t, gvr, namespace, name).GetUID())
}

// MustNotExist fails the test if the object is in the cluster.
func MustNotExist(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) {
	t.Helper()
	obj, err := Get(t, gvr, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	if obj != nil {
		t.Fatalf("%s %s/%s is in the cluster, and should not be", gvr.Resource, namespace, name)
	}
}
