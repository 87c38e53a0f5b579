package bridge_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// An ApplySet the real kubectl made (KUBECTL_APPLYSET=true, its parent
// secret/legacy) is imported under the Pulumi engine by the resource option
// `import`, `<namespace>/<name>` of the parent as for `terraform import`,
// and taken over in place: the member the program keeps keeps its UID and
// becomes k8sconnect's alone, the member it no longer gives is pruned, the
// parent's tooling is k8sconnect's; a preview then changes nothing.
func TestPulumiManifestSetImport(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMap := func(name, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: %s}\n", name, ns, value)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(configMap("stays", "a")+"---\n"+configMap("leaves", "b")), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := exec.Command("kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "--prune",
		"--applyset=secret/legacy", "-n", ns, "-f", filepath.Join(dir, "app.yaml"))
	kubectl.Env = append(os.Environ(), "KUBECTL_APPLYSET=true")
	var out bytes.Buffer
	kubectl.Stdout, kubectl.Stderr = &out, &out
	if err := kubectl.Run(); err != nil {
		t.Fatalf("kubectl apply --applyset: %v\n%s", err, out.String())
	}
	uid := acctest.UID(t, configMaps, ns, "stays")

	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-manifest-set-import", "runtime": "yaml",
		"resources": map[string]any{
			"app": map[string]any{"type": "k8sconnect:ManifestSet",
				"properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"namespace":         ns,
					"applyset":          map[string]any{"name": "legacy", "namespace": ns},
					"yamlBody":          configMap("stays", "a"),
				},
				"options": map[string]any{"import": ns + "/legacy"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	// The import reads the parent through $KUBECONFIG, as terraform import does.
	s.SetEnv("KUBECONFIG", kubeconfig)
	up := s.Run(pulumitest.Up, nil)
	expectChanges(t, up, map[string]int{"create": 1, "import": 1, "update": 1})
	if !strings.Contains(up.Log, "Taking over an imported set") {
		t.Errorf("the up should warn that it takes over kubectl's set:\n%s", up.Log)
	}
	if got := acctest.UID(t, configMaps, ns, "stays"); got != uid {
		t.Errorf("the import replaced the ConfigMap: UID %s -> %s", uid, got)
	}
	if obj, err := acctest.Get(t, configMaps, ns, "leaves"); err != nil || obj != nil {
		t.Error("the member the program no longer gives should be pruned")
	}
	for _, e := range acctest.MustGet(t, configMaps, ns, "stays").GetManagedFields() {
		if e.Manager != "k8sconnect" && strings.Contains(e.FieldsV1.GetRawString(), "greeting") {
			t.Errorf("after the takeover %s still owns data.greeting", e.Manager)
		}
	}
	if tooling := acctest.MustGet(t, secrets, ns, "legacy").GetAnnotations()["applyset.kubernetes.io/tooling"]; !strings.HasPrefix(tooling, "k8sconnect/") {
		t.Errorf("the parent's tooling is %q after the takeover, want k8sconnect's", tooling)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
}

// ManifestSet's wait under the Pulumi engine: an up whose Deployment never
// gets ready fails, naming it, and the next up takes the same Deployment up
// (same UID) rather than making another; ready, it goes through; with
// wait = false the set applies without waiting.
func TestPulumiManifestSetWaits(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	program := func(hold string, wait bool) string {
		t.Helper()
		deployment := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {k8sconnect.test/hold: %q}}
    spec: {containers: [{name: app, image: registry.k8s.io/pause:3.10}]}
`, ns, hold)
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-manifest-set-wait", "runtime": "yaml",
			"resources": map[string]any{
				"app": map[string]any{"type": "k8sconnect:ManifestSet", "properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"namespace":         ns,
					"yamlBody":          deployment,
					"timeout":           "6s",
					"wait":              wait,
				}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := pulumitest.NewYAMLProgram(t, program("true", true))
	for _, what := range []string{"an up whose Deployment never gets ready", "the same up again"} {
		res, err := s.Try(pulumitest.Up, nil)
		if err == nil {
			t.Fatalf("%s should fail", what)
		}
		if !strings.Contains(res.Log+err.Error(), "apps/Deployment/"+ns+"/web is not ready") {
			t.Errorf("%s should name the Deployment that is not ready:\n%s\n%v", what, res.Log, err)
		}
	}
	uid := acctest.UID(t, deployments, ns, "web")
	s.WriteYAML(program("false", true))
	s.Run(pulumitest.Up, nil)
	if got := acctest.UID(t, deployments, ns, "web"); got != uid {
		t.Errorf("the Deployment was replaced: UID %s -> %s", uid, got)
	}
	s.WriteYAML(program("true", false))
	s.Run(pulumitest.Up, nil)
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
}
