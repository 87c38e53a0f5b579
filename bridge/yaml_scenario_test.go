package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
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

// TestPulumiDefaultProviderConfig proves the configuration commands of
// docs/pulumi/installation-configuration.md: it runs its `pulumi config set
// --path k8sconnect:...` lines, as the page gives them, on a stack of
// examples/pulumi-yaml/scenarios/scoped-default-provider.yaml (whose code the
// docs of getYamlScoped show), where no resource names a cluster, and then
// `pulumi up`. The lines name ~/.kube/config and the context prod; the
// test's HOME holds a kubeconfig whose context prod is the test cluster and
// whose current-context is a server that never answers, so an up that missed
// either setting fails.
func TestPulumiDefaultProviderConfig(t *testing.T) {
	skipShort(t)
	t.Parallel()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(repo, "docs", "pulumi", "installation-configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "pulumi config set --path k8sconnect:") {
			commands = append(commands, line)
		}
	}
	documented := strings.Join(commands, "\n")
	for _, setting := range []string{"k8sconnect:clusterConnection.kubeconfigFile ~/.kube/config", "k8sconnect:clusterConnection.context prod"} {
		if !strings.Contains(documented, setting) {
			t.Fatalf("the page's config commands (%q) no longer set %s: update this test to what the page says", commands, setting)
		}
	}

	home := t.TempDir()
	writeProdKubeconfig(t, filepath.Join(home, ".kube", "config"))
	program, err := os.ReadFile(filepath.Join(repo, "examples", "pulumi-yaml", "scenarios", "scoped-default-provider.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const ns = "k8sconnect-yaml-scoped" // fixed in the program's YAML text
	stack := pulumitest.NewYAMLProgram(t, string(program))
	stack.SetEnv("HOME", home)
	for _, c := range commands {
		stack.Shell(c)
	}

	res := stack.Run(pulumitest.Up, nil)
	// Namespace, ConfigMap, and the stack.
	expectChanges(t, res, map[string]int{"create": 3})
	if got := res.Outputs["settings"]; got != ns+"/settings" {
		t.Errorf("output settings = %v, want %s/settings", got, ns)
	}
	if got := configMapData(t, ns, "settings"); got["greeting"] != "hello" {
		t.Errorf("ConfigMap %s/settings data = %v, want greeting hello", ns, got)
	}

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 3})
	if obj, _ := acctest.Get(t, patchConfigMaps, ns, "settings"); obj != nil {
		t.Errorf("ConfigMap %s/settings is still there after destroy", ns)
	}
}

// writeProdKubeconfig writes a kubeconfig at path whose context prod reaches
// the test cluster and whose current-context, nowhere, names a server that
// refuses every connection.
func writeProdKubeconfig(t *testing.T, path string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(localcluster.Shared(t).KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	prod, ok := cfg.Contexts[localcluster.TokenContext]
	if !ok {
		t.Fatalf("the test cluster's kubeconfig has no context %s", localcluster.TokenContext)
	}
	cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.Contexts = map[string]*clientcmdapi.Context{
		"prod":    prod,
		"nowhere": {Cluster: "nowhere", AuthInfo: prod.AuthInfo},
	}
	cfg.CurrentContext = "nowhere"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}
