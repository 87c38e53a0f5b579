package bridge_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// customTimeouts under the Pulumi engine, which the bridge alone would
// ignore: a ManifestSet whose Deployment never gets ready, its own timeout
// ten minutes and customTimeouts.create 5s, fails in about 5s, naming
// customTimeouts.create; the Deployment is left as it is.
func TestPulumiCustomTimeoutsCreate(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	deployment := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {%s: "true"}}
    spec: {containers: [{name: app, image: registry.k8s.io/pause:3.10}]}
`, ns, localcluster.HoldAnnotation)
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-custom-timeouts", "runtime": "yaml",
		"resources": map[string]any{
			"app": map[string]any{"type": "k8sconnect:ManifestSet",
				"properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"namespace":         ns,
					"yamlBody":          deployment,
					"timeout":           "10m",
				},
				"options": map[string]any{"customTimeouts": map[string]any{"create": "5s"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	begin := time.Now()
	res, err := s.Try(pulumitest.Up, nil)
	took := time.Since(begin)
	t.Logf("pulumi up: %v in %s", err, took.Round(100*time.Millisecond))
	if err == nil {
		t.Fatal("the up should fail")
	}
	want := `the create timeout (customTimeouts.create = "5s") ran out while waiting for apps/Deployment/` + ns + "/web to be ready"
	if !strings.Contains(res.Log+err.Error(), want) {
		t.Errorf("the up should say %q:\n%s\n%v", want, res.Log, err)
	}
	// The engine's start and its preview come first, on a busy machine.
	if took < 5*time.Second || took > 5*time.Second+40*time.Second {
		t.Errorf("the up failed after %s; customTimeouts.create is 5s", took.Round(100*time.Millisecond))
	}
	acctest.MustGet(t, deployments, ns, "web") // left as it is
}
