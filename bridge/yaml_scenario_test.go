package bridge_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/testing/toolchain"
)

// TestPulumiYAMLScenario runs examples/pulumi-yaml/scenarios/split-patch-wait.yaml,
// whose code the Pulumi docs of getYamlSplit, Patch, Wait and getObject show:
// two objects of one getYamlSplit, a Patch of a ConfigMap that a "tool"
// manager made, a Wait for the patched value, and a getObject of it. Then an
// empty preview, and a destroy that removes the two objects and leaves the
// patched value with the ConfigMap.
func TestPulumiYAMLScenario(t *testing.T) {
	skipShort(t)
	t.Parallel()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join(repo, "examples", "pulumi-yaml", "scenarios", "split-patch-wait.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := acctest.Namespace(t)
	configMapOwnedBy(t, "tool", ns, "settings", `{mode: "off", other: "kept"}`)
	const appNS = "k8sconnect-yaml-scenario" // fixed in the program's YAML text
	stack := pulumitest.NewYAMLProgram(t, string(program))

	res := stack.Run(pulumitest.Up, patchConfig(t, localcluster.CertContext, pulumitest.Config{
		"namespace": pulumitest.Plain(ns),
	}))
	// Namespace, ConfigMap app, Patch, Wait, and the stack.
	expectChanges(t, res, map[string]int{"create": 5})
	if got := res.Outputs["mode"]; got != "on" {
		t.Errorf("output mode (getObject after the Wait) = %v, want on", got)
	}
	if got := res.Outputs["app"]; got != appNS+"/app" {
		t.Errorf("output app = %v, want %s/app", got, appNS)
	}
	data := configMapData(t, ns, "settings")
	if data["mode"] != "on" || data["other"] != "kept" {
		t.Errorf("the patched ConfigMap's data = %v, want mode on and other kept", data)
	}
	app := acctest.MustGet(t, patchConfigMaps, appNS, "app")
	if mode, _, _ := unstructured.NestedString(app.Object, "data", "mode"); mode != "on" {
		t.Errorf("ConfigMap %s/app data.mode = %q, want on", appNS, mode)
	}

	res = stack.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
	expectChanges(t, res, map[string]int{"same": 5})

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 5})
	if obj, _ := acctest.Get(t, patchConfigMaps, appNS, "app"); obj != nil {
		t.Errorf("ConfigMap %s/app is still there after destroy", appNS)
	}
	if data := configMapData(t, ns, "settings"); data["mode"] != "on" {
		t.Errorf("destroying the Patch changed the value: data %v", data)
	}
}
