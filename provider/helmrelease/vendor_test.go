package helmrelease_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/vendorfiles"
)

var (
	webhookConfigs = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	ingressClasses = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}
)

// hookPhases are the phases of the hooks' last runs in the release's latest
// revision, as `helm status -o json` reports them: Kind/name -> phase.
func hookPhases(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	var status struct {
		Version int `json:"version"`
		Hooks   []struct {
			Name    string `json:"name"`
			Kind    string `json:"kind"`
			LastRun struct {
				Phase string `json:"phase"`
			} `json:"last_run"`
		} `json:"hooks"`
	}
	out := helmCLI(t, "status", name, "-n", ns, "-o", "json")
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		t.Fatalf("helm status -o json: %v\n%s", err, out)
	}
	phases := map[string]string{}
	for _, h := range status.Hooks {
		phases[h.Kind+"/"+h.Name] = h.LastRun.Phase
	}
	return phases
}

// A chart we did not write, as its vendor publishes it: ingress-nginx 4.11.0,
// whose admission webhook gets its certificate from a pre-install hook Job
// and a post-install one, each with RBAC of its own that the hook-succeeded
// policy deletes. Installed, it is a deployed release whose hooks all
// succeeded and left nothing behind; a second plan is empty; an upgrade runs
// the upgrade hooks again as revision 2; destroy leaves no object and no
// record.
func TestAccHelmReleaseVendorChartWithHooksAndWebhook(t *testing.T) {
	chart := vendorfiles.IngressNginx.Path(t)
	ns := acctest.Namespace(t)
	name := "ingress"
	config := func(replicas int) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "ingress" {
  name      = %[1]q
  namespace = %[2]q
  chart     = %[3]q
  timeout   = "3m"
  set = [
    { name = "controller.service.type", value = "ClusterIP" }, # no load balancer in the test cluster
    { name = "controller.ingressClassResource.name", value = %[2]q },
    { name = "controller.replicaCount", value = "%[4]d" },
  ]
  %[5]s
}
`, name, ns, chart, replicas, acctest.Connection(t))
	}
	w := acctest.NewWorkdir(t)
	w.Write(config(1))
	w.Cleanup()
	w.MustApply()

	if err := records(t, ns, name, map[string]string{"v1": "deployed"})(); err != nil {
		t.Error(err)
	}
	phases := hookPhases(t, ns, name)
	for _, hook := range []string{name + "-ingress-nginx-admission-create", name + "-ingress-nginx-admission-patch"} {
		if phases["Job/"+hook] != "Succeeded" {
			t.Errorf("hook Job %s: last run %q, want Succeeded (hooks: %v)", hook, phases[hook], phases)
		}
		if obj, err := acctest.Get(t, jobs, ns, hook); err != nil || obj != nil {
			t.Errorf("hook Job %s is still there: its hook-succeeded policy deletes it", hook)
		}
	}
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		hook := kind + "/" + name + "-ingress-nginx-admission"
		if phases[hook] != "Succeeded" {
			t.Errorf("hook %s, which the Jobs run under: last run %q, want Succeeded (hooks: %v)", hook, phases[hook], phases)
		}
	}
	acctest.MustGet(t, webhookConfigs, "", name+"-ingress-nginx-admission")
	acctest.MustGet(t, ingressClasses, "", ns)
	acctest.MustGet(t, deployments, ns, name+"-ingress-nginx-controller")
	w.MustPlanNoChanges()

	w.Write(config(2))
	w.MustApply()
	if got := w.StateAttribute("k8sconnect_helm_release.ingress", "revision"); got != "2" {
		t.Errorf("revision %q after the upgrade, want 2", got)
	}
	if phase := hookPhases(t, ns, name)["Job/"+name+"-ingress-nginx-admission-create"]; phase != "Succeeded" {
		t.Errorf("the pre-upgrade hook's last run: %q, want Succeeded", phase)
	}
	w.MustPlanNoChanges()

	if r := w.Destroy(); r.Err != nil {
		t.Fatalf("destroy: %v\n%s", r.Err, r.Output)
	}
	if err := records(t, ns, name, map[string]string{})(); err != nil {
		t.Error(err)
	}
	if obj, err := acctest.Get(t, webhookConfigs, "", name+"-ingress-nginx-admission"); err != nil || obj != nil {
		t.Errorf("the webhook configuration outlived the release (err %v)", err)
	}
}

// A hook Job whose pods can never be created (its ServiceAccount does not
// exist) shows no pod and no condition: the failure names what the Job
// controller reported instead, so the user learns why without kubectl.
func TestAccHelmReleaseHookWithoutPodsSaysWhy(t *testing.T) {
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_helm_release" "stranded" {
  name      = "stranded"
  namespace = %[1]q
  chart     = %[2]q
  timeout   = "20s"
  %[3]s
}
`, ns, chartPath(t, "strandedhook"), acctest.Connection(t)))
	w.Cleanup()
	r := w.Apply()
	w.MustFail(r, "apply with a hook Job that cannot create its pods")
	if !r.HasError("Hook failed", "stranded-migrate", "FailedCreate", `serviceaccount "stranded-nobody" not found`) {
		t.Errorf("the hook's failure should carry the Job controller's FailedCreate warning:\n%s", r.Output)
	}
	if obj, err := acctest.Get(t, configMaps, ns, "stranded-settings"); err != nil || obj != nil {
		t.Errorf("the release's objects were applied although its pre-install hook failed (err %v)", err)
	}
}
