package helmrelease_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// declarations declares release name once per decl ("first", "second"),
// each with a greeting of its own.
func declarations(t *testing.T, ns, name string, decls ...string) string {
	var b strings.Builder
	for _, decl := range decls {
		fmt.Fprintf(&b, `
resource "k8sconnect_helm_release" %[1]q {
  name      = %[2]q
  namespace = %[3]q
  chart     = %[4]q
  timeout   = "90s"
  set       = [{ name = "greeting", value = "from-%[1]s" }]
  %[5]s
}
`, decl, name, ns, chartPath(t, "lifecycle"), acctest.Connection(t))
	}
	return b.String()
}

// The same release declared twice in one configuration: the engine creates
// both at once. Exactly one gets the release; the other fails saying why,
// having written nothing: no second revision, no value of its own in the
// cluster, nothing in state. The next apply refuses it again at plan, and
// the winner's release stays as it was.
func TestAccHelmReleaseDeclaredTwice(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "twice"
	w := acctest.NewWorkdir(t)
	w.Write(declarations(t, ns, name, "first", "second"))
	w.Cleanup()

	r := w.Apply()
	w.MustFail(r, "apply of one release declared twice")
	if !r.HasError("Two declarations of one release") && !r.HasError("already exists in the cluster", "Import it") {
		t.Errorf("the loser's error should say that the release is declared twice or already exists:\n%s", r.Output)
	}
	state := w.StateList()
	if len(state) != 1 {
		t.Fatalf("exactly one declaration should hold the release, state has %v\n%s", state, r.Output)
	}
	winner := strings.TrimPrefix(state[0], "k8sconnect_helm_release.")
	check := func(when string) {
		t.Helper()
		if err := records(t, ns, name, map[string]string{"v1": "deployed"})(); err != nil {
			t.Errorf("%s: %v", when, err)
		}
		if err := configMapData(t, ns, name+"-settings", "greeting", "from-"+winner)(); err != nil {
			t.Errorf("%s: the loser changed the winner's objects: %v", when, err)
		}
	}
	check("after the first apply")

	r = w.Apply()
	w.MustFail(r, "second apply of one release declared twice")
	if !r.HasError("cannot be installed", "already exists in the cluster") {
		t.Errorf("the second apply should refuse the loser at plan, saying the release exists:\n%s", r.Output)
	}
	check("after the second apply")

	// The user keeps one declaration: the winner's, which plans no change.
	w.Write(declarations(t, ns, name, winner))
	w.MustPlanNoChanges()
}

// An apply killed while it installs leaves a pending record. While that
// apply runs, its record is renewed, so another run (here a plan, well after
// the lease would have run out without renewal) refuses to touch the
// release; right after the kill it is still refused, the record being fresh.
// Once the lease has run out, the next apply takes the release up again:
// revision 2 deployed, the killed one's marked failed, every object the
// killed run made kept (same UIDs), no import needed.
func TestAccHelmReleaseKilledApplyIsResumed(t *testing.T) {
	const lease = 20 * time.Second
	ns := acctest.Namespace(t)
	name := "killed"
	w := acctest.NewWorkdir(t)
	w.SetEnv("K8SCONNECT_CREATE_PENDING_LEASE", lease.String())
	held := strings.Replace(releaseConfig(t, ns, name, `set = [{ name = "holdPods", value = "true" }]`),
		`timeout   = "60s"`, `timeout   = "5m"`, 1)
	w.Write(held)
	w.Cleanup()

	cmd, out := w.Start("apply", "-auto-approve", "-input=false", "-json")
	var uid string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if recordStatuses(t, ns, name)["v1"] == "pending-install" {
			if obj, err := acctest.Get(t, deployments, ns, name+"-app"); err == nil && obj != nil {
				uid = string(obj.GetUID())
				break
			}
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the apply never got to its readiness wait:\n%s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Past the lease with the apply still running: only renewal keeps it.
	time.Sleep(lease + 5*time.Second)
	w.Write(releaseConfig(t, ns, name, ""))
	r := w.Run("plan", "-input=false", "-json", "-lock=false")
	w.MustFail(r, "plan while another apply installs the release")
	if !r.HasError("is being changed by another k8sconnect apply right now") {
		t.Errorf("the plan should refuse a release another apply is installing:\n%s", r.Output)
	}

	if _, err := faultproxy.KillTree(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killedAt := time.Now()
	r = w.Apply()
	w.MustFail(r, "apply right after the kill")
	if !r.HasError("is being changed by another k8sconnect apply right now", "run again after") {
		t.Errorf("right after the kill the record is still fresh, and the error should say when to run again:\n%s", r.Output)
	}

	time.Sleep(time.Until(killedAt.Add(lease + 2*time.Second)))
	w.MustApply()
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "2" {
		t.Errorf("revision %q after the resumed install, want 2", got)
	}
	if err := records(t, ns, name, map[string]string{"v1": "failed", "v2": "deployed"})(); err != nil {
		t.Error(err)
	}
	if got := acctest.UID(t, deployments, ns, name+"-app"); got != uid {
		t.Errorf("the Deployment the killed apply made was recreated: UID %s -> %s", uid, got)
	}
	w.MustPlanNoChanges()
}

// The token expires between two runs, as a CI job's short-lived token does.
// The refresh keeps the release in state and says what to do (it used to
// fail the run), nothing is planned as an install, the plan fails saying the
// credentials expired, and a renewed token plans nothing: the same revision,
// the same objects.
func TestAccHelmReleaseExpiredTokenKeepsState(t *testing.T) {
	c := localcluster.Shared(t)
	kc := acctest.NewTokenKubeconfig(t, c, c.Token)
	kubeconfig, writeToken := kc.Path, kc.Write
	ns, name := acctest.Namespace(t), "expired"
	w := acctest.NewWorkdir(t)
	w.Write(releaseVia(t, fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, ""))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, deployments, ns, name+"-app")

	writeToken("expired-" + c.Token[:8])
	r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	if r.Err != nil {
		t.Fatalf("a refresh with an expired token should keep the release in state with a warning, not fail:\n%s", r.Output)
	}
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || strings.Contains(d.Summary, "Stored credentials refused: state not refreshed")
	}
	if !warned {
		t.Errorf("the refresh should warn that the stored credentials were refused:\n%s", r.Output)
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("the refresh with an expired token dropped the release from state: %q", got)
	}
	r = w.Plan()
	w.MustFail(r, "plan with an expired token")
	if !r.HasError("expired", "Renew it") {
		t.Errorf("the plan's error does not say the credentials expired and what to do: %+v", r.Errors())
	}
	if strings.Contains(r.Output, c.Token) {
		t.Error("the output holds the token")
	}

	writeToken(c.Token)
	w.MustPlanNoChanges()
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "1" {
		t.Errorf("revision %q after the token was renewed, want 1", got)
	}
	if err := records(t, ns, name, map[string]string{"v1": "deployed"})(); err != nil {
		t.Error(err)
	}
	if got := acctest.UID(t, deployments, ns, name+"-app"); got != uid {
		t.Errorf("the Deployment was made again: UID %s -> %s", uid, got)
	}
}

// An upgrade whose write of one object the cluster refuses (403: the account
// may not change it) fails naming that object and what to do; the release
// records the failed revision as Helm would, and the object keeps its value.
// With the refusal gone, two 503s without Retry-After on the same write are
// sent again and the next apply completes the upgrade: no object made again,
// no change left.
func TestAccHelmReleaseRefusedWriteFailsOnlyItsRevision(t *testing.T) {
	c := localcluster.Shared(t)
	proxy := faultproxy.New(t, c.Host, c.CAPEM)
	ns, name := acctest.Namespace(t), "refused"
	conn := fmt.Sprintf(`cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
  }`, proxy.URL, string(proxy.CAPEM), c.Token)
	greeting := func(g string) string {
		return releaseVia(t, conn, ns, name, fmt.Sprintf(`set = [{ name = "greeting", value = %q }]`, g))
	}
	w := acctest.NewWorkdir(t)
	w.Write(greeting("one"))
	w.Cleanup()
	t.Cleanup(proxy.Clear) // runs before the destroy registered above
	w.MustApply()
	uids := map[string]string{
		"settings": acctest.UID(t, configMaps, ns, name+"-settings"),
		"app":      acctest.UID(t, deployments, ns, name+"-app"),
	}

	settings := faultproxy.ApplyOf("configmaps", name+"-settings")
	refused := proxy.Inject(faultproxy.Rule{Match: settings, Action: faultproxy.Answer, Status: http.StatusForbidden})
	w.Write(greeting("two"))
	r := w.Apply()
	w.MustFail(r, "an upgrade whose write of the ConfigMap is refused")
	if !r.HasError("Object not applied", name+"-settings", "403 Forbidden", "RBAC") {
		t.Errorf("the error should name the object, the refusal and what to do: %+v", r.Errors())
	}
	if refused.Hits() == 0 {
		t.Fatal("the refusal never happened: the ConfigMap's write did not match")
	}
	if err := configMapData(t, ns, name+"-settings", "greeting", "one")(); err != nil {
		t.Error(err)
	}
	// As helm upgrade: the revision that failed is marked so, and the last
	// deployed one stays deployed until an upgrade succeeds.
	if err := records(t, ns, name, map[string]string{"v1": "deployed", "v2": "failed"})(); err != nil {
		t.Error(err)
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("the failed upgrade dropped the release from state: %q", got)
	}
	refused.Remove()

	busy := proxy.Inject(faultproxy.Rule{Match: settings, Action: faultproxy.Answer, Status: http.StatusServiceUnavailable, Times: 2})
	w.MustApply()
	if busy.Hits() != 2 {
		t.Errorf("the 503s were answered %d times, want 2", busy.Hits())
	}
	if err := configMapData(t, ns, name+"-settings", "greeting", "two")(); err != nil {
		t.Error(err)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "revision"); got != "3" {
		t.Errorf("revision %q after the completed upgrade, want 3", got)
	}
	if err := records(t, ns, name, map[string]string{"v1": "superseded", "v2": "failed", "v3": "deployed"})(); err != nil {
		t.Error(err)
	}
	if got := acctest.UID(t, configMaps, ns, name+"-settings"); got != uids["settings"] {
		t.Errorf("the ConfigMap was made again: UID %s -> %s", uids["settings"], got)
	}
	if got := acctest.UID(t, deployments, ns, name+"-app"); got != uids["app"] {
		t.Errorf("the Deployment was made again: UID %s -> %s", uids["app"], got)
	}
	w.MustPlanNoChanges()
}
