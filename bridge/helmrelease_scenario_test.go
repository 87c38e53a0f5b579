package bridge_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// greeterGroup is the API group of the CRD of the greeter chart, the chart
// of k8sconnect_helm_template's example that the helm-release scenario
// installs.
const greeterGroup = "greeter.example.com"

// The scenario "helm-release" (the code the Pulumi docs of HelmRelease show)
// under the real Pulumi engine, in every language that has it: the greeter
// chart installs as release revision 1 into a namespace the release creates,
// with the program's values and set entry in the cluster and every object in
// the objects output; the next preview changes nothing; destroy uninstalls
// the release. Each language has its namespace and its copy of the chart with
// a CRD group of its own, so the runs never share an object.
func TestPulumiHelmReleaseScenario(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, lang := range pulumitest.Languages {
		t.Run(string(lang), func(t *testing.T) {
			t.Parallel()
			testHelmReleaseScenario(t, lang)
		})
	}
}

func testHelmReleaseScenario(t *testing.T, lang pulumitest.Language) {
	cluster := localcluster.Shared(t)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ns := acctest.Name("pulumirelease-" + string(lang))
	group := string(lang) + "." + greeterGroup
	crd := "greetings." + group
	clusterRole := "greeter-" + ns + "-reader"
	// createNamespace leaves the namespace at destroy, as helm does; the
	// cluster-wide objects go too, whatever destroy did with them (see the
	// end). Registered before the stack, so they run after its destroy.
	t.Cleanup(func() {
		ctx := context.Background()
		_ = acctest.Clientset(t).CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		_ = acctest.Dynamic(t).Resource(helmClusterRoles).Delete(ctx, clusterRole, metav1.DeleteOptions{})
		_ = acctest.Dynamic(t).Resource(helmCRDs).Delete(ctx, crd, metav1.DeleteOptions{})
	})

	var stack *pulumitest.Stack
	switch lang {
	case pulumitest.YAML:
		program, err := os.ReadFile(filepath.Join(repo, "examples", "pulumi-yaml", "scenarios", "helm-release.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		stack = pulumitest.NewYAMLProgram(t, string(program))
	default:
		stack = pulumitest.NewScenario(t, lang, map[pulumitest.Language]string{
			pulumitest.TypeScript: "helm-release",
			pulumitest.Python:     "helm_release",
			pulumitest.Go:         "helm-release",
			pulumitest.Java:       "InstallHelmRelease",
		}[lang])
	}
	greeting := "hello from " + string(lang)
	res := stack.Run(pulumitest.Up, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.TokenContext),
		"namespace":      pulumitest.Plain(ns),
		"chart": pulumitest.Plain(renamedChart(t,
			filepath.Join(repo, "examples", "data-sources", "k8sconnect_helm_template", "chart"), greeterGroup, group)),
		"greeting": pulumitest.Plain(greeting),
	})
	// The release, the manifest set beside it and the stack.
	expectChanges(t, res, map[string]int{"create": 3})
	if got := fmt.Sprint(res.Outputs["revision"]); got != "1" {
		t.Errorf("output revision = %s, want 1", got)
	}
	configMapKey := "core/ConfigMap/" + ns + "/greeter"
	want := []string{
		"apiextensions.k8s.io/CustomResourceDefinition/" + crd,
		"apps/Deployment/" + ns + "/greeter",
		configMapKey,
		"core/Secret/" + ns + "/greeter-token",
		"rbac.authorization.k8s.io/ClusterRole/" + clusterRole,
	}
	objects, _ := res.Outputs["objects"].(map[string]any)
	if got := outputKeys(objects); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("output objects has keys %v, want %v", got, want)
	}
	if cm, _ := objects[configMapKey].(map[string]any); cm["data.greeting"] != greeting {
		t.Errorf("output objects[%q] = %v, want data.greeting %q", configMapKey, objects[configMapKey], greeting)
	}
	if err := acctest.ConfigMapHas(t, ns, "greeter-extra", "note", "from a manifest set"); err != nil {
		t.Errorf("the manifest set beside the release: %v", err)
	}
	if err := acctest.ConfigMapHas(t, ns, "greeter", "greeting", greeting); err != nil {
		t.Errorf("the set entry did not reach the cluster: %v", err)
	}
	if replicas, _, _ := unstructured.NestedInt64(acctest.MustGet(t, patchDeployments, ns, "greeter").Object, "spec", "replicas"); replicas != 2 {
		t.Errorf("Deployment %s/greeter has %d replicas, want 2 (from values)", ns, replicas)
	}
	acctest.MustGet(t, helmClusterRoles, "", clusterRole)
	// The record that `helm list` and `helm history` read.
	const record = "sh.helm.release.v1.greeter.v1"
	acctest.MustGet(t, secSecrets, ns, record)
	if t.Failed() {
		t.FailNow()
	}

	res = stack.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
	expectChanges(t, res, map[string]int{"same": 3})

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 3})
	if obj, err := acctest.Get(t, secSecrets, ns, record); err != nil || obj != nil {
		t.Errorf("the release record after destroy: err %v, still there %v", err, obj != nil)
	}
	// The bridge passes no private state to a delete: the objects to delete
	// are found from the state's objects and the release record.
	for _, gone := range []struct {
		what string
		get  func() (*unstructured.Unstructured, error)
	}{
		{"ConfigMap greeter", func() (*unstructured.Unstructured, error) { return acctest.Get(t, patchConfigMaps, ns, "greeter") }},
		{"Deployment greeter", func() (*unstructured.Unstructured, error) { return acctest.Get(t, patchDeployments, ns, "greeter") }},
		{"ClusterRole " + clusterRole, func() (*unstructured.Unstructured, error) { return acctest.Get(t, helmClusterRoles, "", clusterRole) }},
	} {
		if obj, err := gone.get(); err != nil || obj != nil {
			t.Errorf("%s after destroy: err %v, still there %v", gone.what, err, obj != nil)
		}
	}
	// The chart's CRD comes from crds/, which helm uninstall keeps too.
	if obj, err := acctest.Get(t, helmCRDs, "", crd); err != nil || obj == nil {
		t.Errorf("CRD %s after destroy: err %v, present %v; a CRD of crds/ must outlive the release", crd, err, obj != nil)
	}
}

// renamedChart copies the chart at dir with every "from" in its files
// replaced by "to" and returns the copy's directory: a CRD is cluster-wide,
// so runs in parallel need CRD groups of their own.
func renamedChart(t *testing.T, dir, from, to string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(out, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(out, rel), []byte(strings.ReplaceAll(string(b), from, to)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
