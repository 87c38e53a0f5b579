package patch_test

// Crash safety of k8sconnect_patch (docs/adr/0002-crash-safe-patch.md),
// through provider/faultproxy in front of the real API server: a create whose
// patch reached the server but whose answer never came back fails the run,
// and the next run finishes it under the same field manager instead of
// refusing the manager the lost run left on the target.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/provider/acctest"
	"github.com/k8sconnect/k8sconnect/provider/faultproxy"
	"github.com/k8sconnect/k8sconnect/provider/localcluster"
)

func TestAccPatchCrash_createResponseLost(t *testing.T) {
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("crash")
	target := acctest.ApplyAs(t, "helm", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello, owner: helm}\n", name, ns))
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
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
`, ns, name, proxy.URL, string(proxy.CAPEM), cluster.Token))
	w.Cleanup()
	t.Cleanup(proxy.Clear) // runs before the destroy registered above

	// The patch lands; its answer is cut.
	f := proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", name), Action: faultproxy.Cut})
	w.MustFail(w.Apply(), "apply with the patch's response cut")
	if f.Hits() == 0 {
		t.Fatalf("the fault never fired: %v", proxy.Requests())
	}
	if got := w.StateList(); len(got) != 0 {
		t.Fatalf("state after the failed create = %q, want nothing", got)
	}
	landed := acctest.MustGet(t, configMaps, ns, name)
	lost := patchManagers(landed)
	if len(lost) != 1 || landed.Object["data"].(map[string]any)["greeting"] != "patched" {
		t.Fatalf("after the cut the target should carry the patch under one manager; managers %q, data %v", managers(landed), landed.Object["data"])
	}

	// The next run finishes the create under the same manager.
	f.Remove()
	if r := w.Apply(); r.Err != nil {
		t.Fatalf("%s apply after the fault: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	if got := w.StateList(); strings.Join(got, ",") != "k8sconnect_patch.greeting" {
		t.Fatalf("state = %q, want the patch exactly once", got)
	}
	live := acctest.MustGet(t, configMaps, ns, name)
	if got := patchManagers(live); len(got) != 1 || got[0] != lost[0] {
		t.Fatalf("patch managers on the target = %q, want only %q, the one the lost run left", got, lost[0])
	}
	if live.GetUID() != target.GetUID() {
		t.Fatalf("the target was replaced: UID %s, was %s", live.GetUID(), target.GetUID())
	}
	if data := live.Object["data"].(map[string]any); data["greeting"] != "patched" || data["owner"] != "helm" {
		t.Fatalf("target data = %v, want greeting patched and helm's owner kept", data)
	}
	if add, change, remove := w.Plan().Changes(); add != 0 || change != 0 || remove != 0 {
		t.Fatalf("plan after recovery: %d to add, %d to change, %d to destroy; want nothing", add, change, remove)
	}
}
