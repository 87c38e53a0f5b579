package helmrelease_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/vendorfiles"
)

var clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// gatekeeperCRDs are the CRDs of the Gatekeeper chart's crds/ directory, by
// file: what helm installs before anything else and keeps after uninstall.
func gatekeeperCRDs(t *testing.T, chart string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chart, "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the chart's crds/: %v %v", files, err)
	}
	name := regexp.MustCompile(`(?m)^  name: (\S+)$`)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := name.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no CRD name", f)
		}
		names = append(names, string(m[1]))
	}
	return names
}

// deploymentState is a Deployment's UID, replicas and its first container's
// args, as a user reads them with kubectl.
type deploymentState struct {
	uid      string
	replicas int64
	args     []string
}

func gatekeeperDeployment(t *testing.T, ns, name string) deploymentState {
	t.Helper()
	obj := acctest.MustGet(t, deployments, ns, name)
	replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	var args []string
	if len(containers) > 0 {
		args, _, _ = unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	}
	return deploymentState{uid: string(obj.GetUID()), replicas: replicas, args: args}
}

// A public chart with CRDs and hooks that no one here wrote, as a new user
// lives it: OPA Gatekeeper 3.23.1 (17 CRDs in crds/; a pre-install and
// pre-upgrade hook Job, a post-install one, each with hook-scoped RBAC).
// Installed, its CRDs are there and Established, its hooks ran and were
// deleted, helm shows revision 1 deployed; a values change is an upgrade in
// place (same UIDs, the pre-upgrade hook again); an upgrade by the helm CLI
// from outside, reusing our values but one, is drift the plan names and the
// apply reverts; so is a helm rollback to revision 1; destroy uninstalls:
// helm lists nothing, the objects are gone, and the CRDs of crds/ stay, as
// helm uninstall leaves them.
func TestAccHelmReleaseVendorChartWithCRDsAndHooks(t *testing.T) {
	chart := vendorfiles.Gatekeeper.Path(t)
	crdNames := gatekeeperCRDs(t, chart)
	ns := acctest.Namespace(t)
	name := "gatekeeper"
	t.Cleanup(func() { // the CRDs outlive the release, as with helm
		for _, crd := range crdNames {
			_ = acctest.Dynamic(t).Resource(crds).Delete(context.Background(), crd, metav1.DeleteOptions{})
		}
	})
	config := func(replicas int, logLevel string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "gatekeeper" {
  name      = %[1]q
  namespace = %[2]q
  chart     = %[3]q
  timeout   = "3m"
  set = [
    # No webhook: the test cluster's pods serve nothing, and a webhook of
    # every kind would slow every other test on the cluster.
    { name = "disableValidatingWebhook", value = "true" },
    { name = "disableMutation", value = "true" },
    { name = "replicas", value = "%[4]d" },
    { name = "logLevel", value = %[5]q },
  ]
  %[6]s
}
`, name, ns, chart, replicas, logLevel, acctest.Connection(t))
	}
	const address = "k8sconnect_helm_release.gatekeeper"
	manager, audit := "gatekeeper-controller-manager", "gatekeeper-audit"
	w := acctest.NewWorkdir(t)
	w.Write(config(2, "INFO"))
	w.Cleanup()
	w.MustApply()

	// Installed: what a user checks first.
	if out := helmCLI(t, "status", name, "-n", ns); !regexp.MustCompile(`STATUS: deployed`).MatchString(out) || !regexp.MustCompile(`REVISION: 1\b`).MatchString(out) {
		t.Errorf("helm status after the install:\n%s", out)
	}
	objects := w.StateAttribute(address, "objects")
	for _, crd := range crdNames {
		obj := acctest.MustGet(t, crds, "", crd)
		if !crdEstablished(obj.Object) {
			t.Errorf("CRD %s is not Established", crd)
		}
		if !strings.Contains(objects, "apiextensions.k8s.io/CustomResourceDefinition/"+crd) {
			t.Errorf("objects lacks the CRD %s of crds/", crd)
		}
	}
	phases := hookPhases(t, ns, name)
	for _, hook := range []string{"Job/gatekeeper-update-crds-hook", "Job/gatekeeper-update-namespace-label",
		"ServiceAccount/gatekeeper-admin-upgrade-crds", "ClusterRole/gatekeeper-admin-upgrade-crds", "ClusterRoleBinding/gatekeeper-admin-upgrade-crds",
		"ServiceAccount/gatekeeper-update-namespace-label", "ClusterRole/gatekeeper-update-namespace-label", "ClusterRoleBinding/gatekeeper-update-namespace-label"} {
		if phases[hook] != "Succeeded" {
			t.Errorf("hook %s: last run %q, want Succeeded (hooks: %v)", hook, phases[hook], phases)
		}
	}
	for _, job := range []string{"gatekeeper-update-crds-hook", "gatekeeper-update-namespace-label"} {
		if obj, err := acctest.Get(t, jobs, ns, job); err != nil || obj != nil {
			t.Errorf("hook Job %s is still there: its hook-succeeded policy deletes it (err %v)", job, err)
		}
	}
	installed := gatekeeperDeployment(t, ns, manager)
	auditUID := acctest.UID(t, deployments, ns, audit)
	if installed.replicas != 2 || !slices.Contains(installed.args, "--log-level=INFO") {
		t.Errorf("%s after the install: replicas %d, args %v", manager, installed.replicas, installed.args)
	}
	w.MustPlanNoChanges()

	// Edited in place: a values change is revision 2, the same objects.
	w.Write(config(1, "DEBUG"))
	r := w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("a values change should plan one update (%v):\n%.3000s", r.Err, r.Output)
	}
	w.MustApply()
	edited := gatekeeperDeployment(t, ns, manager)
	if edited.uid != installed.uid || acctest.UID(t, deployments, ns, audit) != auditUID {
		t.Errorf("the upgrade replaced a Deployment: %s %s -> %s", manager, installed.uid, edited.uid)
	}
	if edited.replicas != 1 || !slices.Contains(edited.args, "--log-level=DEBUG") {
		t.Errorf("%s after the upgrade: replicas %d, args %v", manager, edited.replicas, edited.args)
	}
	if got := w.StateAttribute(address, "revision"); got != "2" {
		t.Errorf("revision %q after the upgrade, want 2", got)
	}
	if phase := hookPhases(t, ns, name)["Job/gatekeeper-update-crds-hook"]; phase != "Succeeded" {
		t.Errorf("the pre-upgrade hook's last run: %q, want Succeeded", phase)
	}
	w.MustPlanNoChanges()

	// Upgraded from outside by helm, reusing our values but one.
	helmCLI(t, "upgrade", name, chart, "-n", ns, "--reuse-values", "--set", "replicas=3")
	if got := gatekeeperDeployment(t, ns, manager).replicas; got != 3 {
		t.Fatalf("helm upgrade --set replicas=3 left %d replicas", got)
	}
	expectDriftRepaired(t, w, ns, manager, "3", 4)
	if got := gatekeeperDeployment(t, ns, manager); got.replicas != 1 || got.uid != installed.uid {
		t.Errorf("after the apply that reverts helm's upgrade: replicas %d (want 1), UID %s (want %s)", got.replicas, got.uid, installed.uid)
	}

	// Rolled back from outside to revision 1: its values, not ours.
	helmCLI(t, "rollback", name, "1", "-n", ns)
	if got := gatekeeperDeployment(t, ns, manager); got.replicas != 2 || !slices.Contains(got.args, "--log-level=INFO") {
		t.Fatalf("helm rollback to 1 left replicas %d, args %v", got.replicas, got.args)
	}
	expectDriftRepaired(t, w, ns, manager, "2", 6,
		// Both Deployments' args, in the warning that names who changed them.
		regexp.MustCompile(`(?m)^\s*spec\.template\.spec\.containers\[name=manager\]\.args: \["--audit-interval=60","--log-level=INFO".*"--log-level=DEBUG".*\(changed by helm\)$`),
		regexp.MustCompile(`(?m)^\s*spec\.template\.spec\.containers\[name=manager\]\.args: \["--port=8443".*"--log-level=INFO".*"--log-level=DEBUG".*\(changed by helm\)$`))
	if got := gatekeeperDeployment(t, ns, manager); got.replicas != 1 || !slices.Contains(got.args, "--log-level=DEBUG") || got.uid != installed.uid {
		t.Errorf("after the apply that reverts helm's rollback: replicas %d, args %v, UID %s (want %s)", got.replicas, got.args, got.uid, installed.uid)
	}
	history := helmHistory(t, ns, name)
	if len(history) != 6 || history[5] != "Rollback to 1" {
		t.Errorf("helm history: %v, want six revisions, the fifth helm's rollback to 1", history)
	}

	// Uninstalled.
	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	if out := helmCLI(t, "list", "-n", ns, "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("helm list after destroy: %q, want nothing", out)
	}
	if err := records(t, ns, name, map[string]string{})(); err != nil {
		t.Error(err)
	}
	for _, d := range []string{manager, audit} {
		acctest.MustNotExist(t, deployments, ns, d)
	}
	acctest.MustNotExist(t, clusterRoles, "", "gatekeeper-manager-role")
	for _, crd := range crdNames {
		acctest.MustGet(t, crds, "", crd)
	}
}

// expectDriftRepaired: after helm changed the release from outside, the
// plan is one update that names the controller manager's replicas, helm's
// value against ours (1), and whatever more matches; the apply puts ours back as revision
// wantRevision, which helm status shows deployed.
func expectDriftRepaired(t *testing.T, w *acctest.Workdir, ns, manager, helmReplicas string, wantRevision int, more ...*regexp.Regexp) {
	t.Helper()
	key := "apps/Deployment/" + ns + "/" + manager
	r := w.Plan()
	if _, change, _ := r.Changes(); r.Err != nil || change != 1 {
		t.Fatalf("what helm did should plan one update (%v):\n%.3000s", r.Err, r.Output)
	}
	human := w.Human("plan").Output
	replicas := regexp.MustCompile(`"spec\.replicas"\s+=\s+"` + helmReplicas + `"\s+->\s+"1"`)
	if !strings.Contains(human, key) || !replicas.MatchString(human) || !strings.Contains(human, "spec.replicas: "+helmReplicas+" -> 1 (changed by helm)") {
		t.Errorf("the plan should name %s and its replicas %s -> 1, changed by helm:\n%s", key, helmReplicas, human)
	}
	for _, re := range more {
		if !re.MatchString(human) {
			t.Errorf("the plan should match %s:\n%s", re, human)
		}
	}
	w.MustApply()
	if got := w.StateAttribute("k8sconnect_helm_release.gatekeeper", "revision"); got != fmt.Sprint(wantRevision) {
		t.Errorf("revision %q after the repair, want %d", got, wantRevision)
	}
	out := helmCLI(t, "status", "gatekeeper", "-n", ns)
	if !strings.Contains(out, "STATUS: deployed") || !regexp.MustCompile(fmt.Sprintf(`REVISION: %d\b`, wantRevision)).MatchString(out) {
		t.Errorf("helm status after the repair should show revision %d deployed:\n%s", wantRevision, out)
	}
	w.MustPlanNoChanges()
}

func crdEstablished(obj map[string]any) bool {
	status, _ := obj["status"].(map[string]any)
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}
