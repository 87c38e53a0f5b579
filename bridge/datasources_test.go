package bridge_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// The data sources are functions in the SDKs. The "manifests" scenario of
// TypeScript, Python and Go splits the multi-document file of yaml_scoped's
// Terraform tests (written out of order: namespaced objects before their
// Namespace, a custom resource before its CRD) and applies it CRDs first;
// the same file reordered previews no change. The scenario also keys the file
// with getYamlSplit and reads the kube-system Namespace with getObject: the
// Pulumi docs of the three functions show its code.
func TestPulumiYAMLScoped(t *testing.T) {
	skipShort(t)
	for _, lang := range []pulumitest.Language{pulumitest.TypeScript, pulumitest.Python, pulumitest.Go} {
		t.Run(string(lang), func(t *testing.T) {
			t.Parallel()
			testManifests(t, lang)
		})
	}
}

func testManifests(t *testing.T, lang pulumitest.Language) {
	cluster := localcluster.Shared(t)
	dyn, err := dynamic.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Through the Automation API, which users call too; the other TypeScript
	// and Python scenarios run under the CLI (Go's all run this way).
	stack := pulumitest.NewAutomation(t, lang, "manifests")
	namespace := "manifests-" + stack.Name()
	// One CRD group per language, so the languages' runs never share an object.
	group := string(lang) + ".yamlscoped.k8sconnect.test"
	shelves := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "shelves"}

	render := func(file string) string {
		repo, err := toolchain.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(repo, "provider", "yamlscoped", "testdata", "scoped", file))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "${namespace}", namespace)
		s = strings.ReplaceAll(s, "yamlscoped.k8sconnect.test", group)
		out := filepath.Join(t.TempDir(), strings.TrimSuffix(file, ".tftpl"))
		if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}

	res := stack.Run(pulumitest.Up, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.TokenContext),
		"manifests":      pulumitest.Plain(render("app.yaml.tftpl")),
	})
	// CRD, Shelf, Namespace, ConfigMap, ServiceAccount, and the stack.
	expectChanges(t, res, map[string]int{"create": 6})
	if got := res.Outputs["applied"]; got != float64(5) {
		t.Errorf("output applied = %v, want 5", got)
	}
	// getYamlSplit of the same file: one key per document, the Namespace's
	// without a namespace of its own.
	if keys, _ := res.Outputs["keys"].([]any); len(keys) != 5 || !slices.Contains(keys, any("core/Namespace/"+namespace)) {
		t.Errorf("output keys = %v, want the 5 documents' keys, core/Namespace/%s among them", res.Outputs["keys"], namespace)
	}
	ctx := context.Background()
	// getObject of the kube-system Namespace: its uid, as the cluster has it.
	kubeSystem, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Outputs["clusterId"], string(kubeSystem.GetUID()); got != want {
		t.Errorf("output clusterId = %v, want the uid of Namespace kube-system, %s", got, want)
	}
	_, err = dyn.Resource(shelves).Get(ctx, namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the cluster-scoped Shelf %s: %v", namespace, err)
	}
	for _, r := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "serviceaccounts"}} {
		name := map[string]string{"configmaps": "settings", "serviceaccounts": "reader"}[r.Resource]
		if _, err := dyn.Resource(r).Namespace(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s %s/%s: %v", r.Resource, namespace, name, err)
		}
	}

	// The same documents in another order: same keys, so nothing to do.
	res = stack.Run(pulumitest.Preview, pulumitest.Config{"manifests": pulumitest.Plain(render("reordered.yaml.tftpl"))})
	expectChanges(t, res, map[string]int{"same": 6})

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 6})
	_, err = dyn.Resource(shelves).Get(ctx, namespace, metav1.GetOptions{})
	expectGone(t, "Shelf "+namespace, err)
}
