package bridge_test

import (
	"context"
	"fmt"
	"os/exec"
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
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// helmInstall installs chart as release name the way `helm install` does
// (Helm 4's own install action, server-side apply, waiting for hooks only),
// so that the Helm 4 case needs no helm CLI. Helm 3, a module the bridge
// does not link, is run as its pinned CLI (helm3CLI).
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
	// The helm CLI writes as field manager "helm"; the SDK, unless told,
	// writes as the name of the binary it runs in (bridge.test), which no
	// user's cluster holds.
	kube.ManagedFieldsManager = "helm"
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = name, ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, 2*time.Minute
	if _, err := install.RunWithContext(context.Background(), ch, values); err != nil {
		t.Fatalf("installing release %s/%s as helm does: %v", ns, name, err)
	}
}

// helm3CLI runs the pinned Helm 3 CLI against the cluster of kubeconfig and
// returns what it printed.
func helm3CLI(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	return helmCLIOf(t, toolchain.Helm3, kubeconfig, args...)
}

// helmCLI runs the pinned helm CLI (Helm 4) against the cluster of
// kubeconfig and returns what it printed: what a user runs beside Pulumi.
func helmCLI(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	return helmCLIOf(t, toolchain.Helm, kubeconfig, args...)
}

func helmCLIOf(t *testing.T, cli, kubeconfig string, args ...string) string {
	t.Helper()
	bin, err := toolchain.Built(context.Background(), cli)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cli, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// A release made by helm (Helm 4's install action, or the Helm 3 CLI's
// `helm install`, client-side apply) is imported by id (the resource option
// `import`, `<namespace>/<name>` as for `terraform import`) and taken over in
// place under the Pulumi engine: the same UIDs, helm's revision 1 superseded
// by ours, 2, with the program's value applied; a preview then changes
// nothing. Helm 3 then reads the records k8sconnect wrote: its history lists
// both revisions, and its rollback to 1 is drift for a refreshing preview,
// which the next up reverts.
func TestPulumiHelmReleaseImport(t *testing.T) {
	for _, helm := range []string{"helm4", "helm3"} {
		t.Run(helm, func(t *testing.T) {
			kubeconfig, ns, chart := lifecycleRelease(t)
			if helm == "helm3" {
				if v := helm3CLI(t, kubeconfig, "version", "--short"); !strings.HasPrefix(v, "v3.") {
					t.Fatalf("the Helm 3 CLI is helm %s", strings.TrimSpace(v))
				}
				helm3CLI(t, kubeconfig, "install", "adopted", chart, "-n", ns, "--set", "greeting=hi", "--set", "keep=false")
			} else {
				helmInstall(t, kubeconfig, ns, "adopted", chart, map[string]any{"greeting": "hi", "keep": false})
			}
			s := adoptByImport(t, kubeconfig, ns, chart)
			if helm == "helm3" {
				helm3GoesOn(t, s, kubeconfig, ns)
			}
		})
	}
}

// adoptByImport imports the release "adopted" of ns into a new stack and takes
// it over with greeting=bonjour, checking what TestPulumiHelmReleaseImport
// says, and returns the stack.
func adoptByImport(t *testing.T, kubeconfig, ns, chart string) *pulumitest.Stack {
	t.Helper()
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
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
	expectRecords(t, ns, map[string]string{"v1": "superseded", "v2": "deployed"})
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
	if resources, _ := s.Resources(); len(resources) != 1 || !strings.Contains(resources[0], "HelmRelease") {
		t.Errorf("the stack should hold the release alone: %v", resources)
	}
	return s
}

// helm3GoesOn is the release of stack s after its adoption from Helm 3
// (revision 1 Helm 3's, greeting=hi; 2 ours, greeting=bonjour): Helm 3's
// history lists both, its rollback to 1 writes 3 and puts hi back, a
// refreshing preview shows that as drift on the ConfigMap, and the up after
// it reverts the greeting in revision 4.
func helm3GoesOn(t *testing.T, s *pulumitest.Stack, kubeconfig, ns string) {
	t.Helper()
	if h := helm3CLI(t, kubeconfig, "history", "adopted", "-n", ns); !strings.Contains(h, "Upgrade complete") ||
		strings.Count(strings.TrimSpace(h), "\n") != 2 {
		t.Fatalf("helm history (Helm 3) after the adoption:\n%s", h)
	}
	helm3CLI(t, kubeconfig, "rollback", "adopted", "1", "-n", ns)
	if err := acctest.ConfigMapHas(t, ns, "adopted-settings", "greeting", "hi"); err != nil {
		t.Fatalf("after helm rollback adopted 1 (Helm 3): %v", err)
	}
	preview := s.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst, "--diff")
	expectChanges(t, preview, map[string]int{"same": 1, "update": 1})
	expectLog(t, preview, "Drift: external changes will be reverted", "data.greeting: hi -> bonjour (changed by helm)")
	expectChanges(t, s.Run(pulumitest.Up, nil, pulumitest.RefreshFirst), map[string]int{"same": 1, "update": 1})
	if err := acctest.ConfigMapHas(t, ns, "adopted-settings", "greeting", "bonjour"); err != nil {
		t.Error(err)
	}
	expectRecords(t, ns, map[string]string{"v1": "superseded", "v2": "superseded", "v3": "superseded", "v4": "deployed"})
}

// expectRecords checks the statuses of the release records of "adopted" in
// ns, by revision.
func expectRecords(t *testing.T, ns string, want map[string]string) {
	t.Helper()
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for rev, status := range want {
		rec, err := acctest.Get(t, secrets, ns, "sh.helm.release.v1.adopted."+rev)
		if err != nil || rec == nil || rec.GetLabels()["status"] != status {
			t.Errorf("record %s: %v (err %v), want %s", rev, labelsOf(rec), err, status)
		}
	}
}

func labelsOf(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "absent"
	}
	return fmt.Sprint(obj.GetLabels())
}
