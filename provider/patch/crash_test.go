package patch_test

// Crash safety of k8sconnect_patch (docs/adr/0002-crash-safe-patch.md),
// through internal/testing/faultproxy in front of the real API server: a create whose
// patch reached the server but whose answer never came back fails the run,
// and the next run finishes it under the same field manager instead of
// refusing the manager the lost run left on the target.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// patchCrash is one crash test's target (a Helm-made ConfigMap), proxy and
// configuration directory: one patch, reached through the proxy.
type patchCrash struct {
	t        *testing.T
	ns, name string
	target   *unstructured.Unstructured
	proxy    *faultproxy.Proxy
	w        *acctest.Workdir
}

func newPatchCrash(t *testing.T) *patchCrash {
	t.Parallel()
	cluster := localcluster.Shared(t)
	p := &patchCrash{t: t, ns: acctest.Namespace(t), name: acctest.Name("crash")}
	p.target = acctest.ApplyAs(t, "helm", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello, owner: helm}\n", p.name, p.ns))
	p.proxy = faultproxy.New(t, cluster.Host, cluster.CAPEM)
	p.w = acctest.NewWorkdir(t)
	p.w.Write(fmt.Sprintf(`
resource "k8sconnect_patch" "greeting" {
  target = {
    api_version = "v1"
    kind        = "ConfigMap"
    namespace   = %q
    name        = %q
  }
  patch          = "data: {greeting: patched}"
  take_ownership = true
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
  }
}
`, p.ns, p.name, p.proxy.URL, string(p.proxy.CAPEM), cluster.Token))
	p.w.Cleanup()
	t.Cleanup(p.proxy.Clear) // runs before the destroy registered above
	return p
}

// landedUnderOneManager checks that the target carries the patch under
// exactly one manager and returns it.
func (p *patchCrash) landedUnderOneManager() string {
	p.t.Helper()
	landed := acctest.MustGet(p.t, configMaps, p.ns, p.name)
	lost := acctest.PatchManagers(landed)
	if len(lost) != 1 || landed.Object["data"].(map[string]any)["greeting"] != "patched" {
		p.t.Fatalf("the target should carry the patch under one manager; managers %q, data %v", acctest.Managers(landed), landed.Object["data"])
	}
	return lost[0]
}

// expectConverged checks the end of a recovering run: the patch once in
// state, exactly one patch manager (want, when given), the target's UID and
// Helm's data kept, nothing left to plan.
func (p *patchCrash) expectConverged(want string) {
	p.t.Helper()
	if got := p.w.StateList(); strings.Join(got, ",") != "k8sconnect_patch.greeting" {
		p.t.Fatalf("state = %q, want the patch exactly once", got)
	}
	live := acctest.MustGet(p.t, configMaps, p.ns, p.name)
	if got := acctest.PatchManagers(live); len(got) != 1 || (want != "" && got[0] != want) {
		p.t.Fatalf("patch managers on the target = %q, want exactly one (%q)", got, want)
	}
	if live.GetUID() != p.target.GetUID() {
		p.t.Fatalf("the target was replaced: UID %s, was %s", live.GetUID(), p.target.GetUID())
	}
	if data := live.Object["data"].(map[string]any); data["greeting"] != "patched" || data["owner"] != "helm" {
		p.t.Fatalf("target data = %v, want greeting patched and helm's owner kept", data)
	}
	if add, change, remove := p.w.Plan().Changes(); add != 0 || change != 0 || remove != 0 {
		p.t.Fatalf("plan after recovery: %d to add, %d to change, %d to destroy; want nothing", add, change, remove)
	}
}

// 1. The patch never reaches the server: nothing on the target, nothing in
// state; the re-run is an ordinary create.
func TestAccPatchCrash_createDroppedBeforeTheServer(t *testing.T) {
	p := newPatchCrash(t)
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", p.name), Action: faultproxy.Drop})
	p.w.MustFail(p.w.Apply(), "apply with the patch dropped")
	acctest.ExpectActed(t, f)
	if got := acctest.PatchManagers(acctest.MustGet(t, configMaps, p.ns, p.name)); len(got) != 0 {
		t.Fatalf("a patch that never reached the server left managers %q", got)
	}
	if got := p.w.StateList(); len(got) != 0 {
		t.Fatalf("state after the failed create = %q, want nothing", got)
	}
	f.Remove()
	if r := p.w.Apply(); r.Err != nil {
		t.Fatalf("%s apply after the fault: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	p.expectConverged("")
}

// 2. The patch lands; its answer is cut. The next run finishes the create
// under the manager the lost run left.
func TestAccPatchCrash_createResponseLost(t *testing.T) {
	p := newPatchCrash(t)
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", p.name), Action: faultproxy.Cut})
	p.w.MustFail(p.w.Apply(), "apply with the patch's response cut")
	acctest.ExpectActed(t, f)
	if got := p.w.StateList(); len(got) != 0 {
		t.Fatalf("state after the failed create = %q, want nothing", got)
	}
	lost := p.landedUnderOneManager()
	f.Remove()
	if r := p.w.Apply(); r.Err != nil {
		t.Fatalf("%s apply after the fault: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	p.expectConverged(lost)
}

// 3. The engine and its plugin are killed while the landed patch's answer is
// held: the re-run finishes under the same manager.
func TestAccPatchCrash_createKilledAfterThePatch(t *testing.T) {
	p := newPatchCrash(t)
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", p.name), Action: faultproxy.Pause, Times: 1})
	cmd, out := p.w.Start("apply", "-auto-approve", "-input=false", "-json")
	acctest.KillWhileHeld(t, cmd, out, f, filepath.Base(cmd.Path), "terraform-provider-k8sconnect")
	lost := p.landedUnderOneManager()
	if r := p.w.Apply(); r.Err != nil {
		t.Fatalf("%s apply after the kill: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	p.expectConverged(lost)
}

// 4. Destroy releases the fields; the release lands but its answer is cut,
// every time. The same destroy reads the target before sending the release
// again, finds its manager gone and finishes, having sent it once
// (docs/adr/0012-network-failures.md): the values stay, Helm's data is
// untouched.
func TestAccPatchCrash_releaseResponseLost(t *testing.T) {
	p := newPatchCrash(t)
	if r := p.w.Apply(); r.Err != nil {
		t.Fatalf("apply: %v\n%s", r.Err, r.Output)
	}
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "PATCH", Path: "/configmaps/" + p.name, Body: "managedFields"}, Action: faultproxy.Cut})
	if r := p.w.Destroy(); r.Err != nil {
		t.Fatalf("%s destroy with the release's answer cut: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	if f.Hits() != 1 {
		t.Fatalf("the release was sent %d times; want once, then settled by reading the target", f.Hits())
	}
	if got := p.w.StateList(); len(got) != 0 {
		t.Fatalf("state after destroy = %q, want nothing", got)
	}
	live := acctest.MustGet(t, configMaps, p.ns, p.name)
	if got := acctest.PatchManagers(live); len(got) != 0 {
		t.Fatalf("patch managers left on the target: %q", got)
	}
	if data := live.Object["data"].(map[string]any); data["greeting"] != "patched" || data["owner"] != "helm" {
		t.Fatalf("target data = %v, want the released value and helm's owner kept", data)
	}
	if live.GetUID() != p.target.GetUID() {
		t.Fatal("the target was replaced")
	}
}

// 5. The patch lands and its answer is cut once: the same run reads the
// target, finds its own manager holding the fields (no rival), and sends the
// patch again, a no-op, so the apply succeeds (docs/adr/0012-network-failures.md).
func TestAccPatchCrash_responseCutOnceIsSettledWithinTheRun(t *testing.T) {
	p := newPatchCrash(t)
	f := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", p.name), Action: faultproxy.Cut, Times: 1})
	if r := p.w.Apply(); r.Err != nil {
		t.Fatalf("%s apply with one answer cut: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	acctest.ExpectActed(t, f)
	p.expectConverged(p.landedUnderOneManager())
}
