package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// helmInstall installs chart as release name the way `helm install` does
// (Helm 4's own install action, server-side apply, waiting for hooks only),
// so that the bridge's tests need no helm CLI, which CI builds only after
// them.
func helmInstall(t *testing.T, kubeconfig, ns, name, chart string, values map[string]any) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chart)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = name, ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	if _, err := install.RunWithContext(context.Background(), ch, values); err != nil {
		t.Fatalf("installing release %s/%s as helm does: %v", ns, name, err)
	}
}

// A release made by helm is imported by id (the resource option `import`,
// `<namespace>/<name>` as for `terraform import`) and taken over in place
// under the Pulumi engine: the same UIDs, helm's revision 1 superseded by
// ours, 2, with the program's value applied; a preview then changes nothing.
func TestPulumiHelmReleaseImport(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	helmInstall(t, kubeconfig, ns, "adopted", chart, map[string]any{"greeting": "hi", "keep": false})
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	uid := acctest.UID(t, configMaps, ns, "adopted-settings")
	appUID := acctest.UID(t, deployments, ns, "adopted-app")

	program := releaseProgram(t, "k8sconnect-helm-import", map[string]map[string]any{"app": {
		"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
		"name":              "adopted",
		"namespace":         ns,
		"chart":             chart,
		"timeout":           "90s",
		"set": []any{map[string]any{"name": "greeting", "value": "bonjour"},
			map[string]any{"name": "keep", "value": "false"}},
	}}, map[string]map[string]any{"app": {"import": ns + "/adopted"}})
	s := pulumitest.NewYAMLProgram(t, program)
	// The import reads the release through $KUBECONFIG, as terraform import does.
	s.SetEnv("KUBECONFIG", kubeconfig)
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 1, "import": 1, "update": 1})

	if got := acctest.UID(t, configMaps, ns, "adopted-settings"); got != uid {
		t.Errorf("the import replaced the ConfigMap: UID %s -> %s", uid, got)
	}
	if got := acctest.UID(t, deployments, ns, "adopted-app"); got != appUID {
		t.Errorf("the import replaced the Deployment: UID %s -> %s", appUID, got)
	}
	if err := acctest.ConfigMapHas(t, ns, "adopted-settings", "greeting", "bonjour"); err != nil {
		t.Error(err)
	}
	for rev, want := range map[string]string{"v1": "superseded", "v2": "deployed"} {
		rec, err := acctest.Get(t, secrets, ns, "sh.helm.release.v1.adopted."+rev)
		if err != nil || rec == nil || rec.GetLabels()["status"] != want {
			t.Errorf("record %s: %v (err %v), want %s", rev, labelsOf(rec), err, want)
		}
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
	if resources, _ := s.Resources(); len(resources) != 1 || !strings.Contains(resources[0], "HelmRelease") {
		t.Errorf("the stack should hold the release alone: %v", resources)
	}
}

func labelsOf(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "absent"
	}
	return fmt.Sprint(obj.GetLabels())
}
