package patch_test

// Ownership safety of k8sconnect_patch: an unchanged
// json_patch plans "no change" only when the object proves its effect, and a
// rival patch is refused at apply as well as at plan, bound to the target's
// resourceVersion by the API server.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func proxiedConnection(p *faultproxy.Proxy, c *localcluster.Cluster) string {
	return fmt.Sprintf("cluster_connection = {\n    host = %q\n    cluster_ca_certificate = %q\n    token = %q\n  }",
		p.URL, string(p.CAPEM), c.Token)
}

func jsonPatchConfig(ns, name, conn string) string {
	return fmt.Sprintf(`
resource "k8sconnect_patch" "json" {
  target = { api_version = "v1", kind = "ConfigMap", name = %q, namespace = %q }
  json_patch = jsonencode([
    { op = "replace", path = "/data/a", value = "one" },
    { op = "remove",  path = "/data/b" },
  ])
  take_ownership = true
  %s
}
`, name, ns, conn)
}

// After the patch, someone sets data.a back. The unchanged patch no longer
// applies (data.b is gone), and its effect is gone too: the plan says so
// instead of planning no change. When the dry run cannot reach the server, the
// plan fails instead of planning no change.
func TestAccPatchSafety_unchangedJSONPatchIsNeverSilent(t *testing.T) {
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("json")
	configMapAs(t, "tool", ns, name, `{a: "1", b: "2"}`)
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(jsonPatchConfig(ns, name, proxiedConnection(proxy, cluster)))
	w.Cleanup()
	t.Cleanup(proxy.Clear)
	w.MustApply()
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan after the patch: %v\n%s", r.Err, r.Output)
	} else if add, change, remove := r.Changes(); add+change+remove != 0 {
		t.Fatalf("the applied, unchanged patch plans +%d ~%d -%d; want nothing", add, change, remove)
	}

	// The dry run is lost on its way: an error, not "no changes".
	f := proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "PATCH", Path: "/configmaps/" + name, Query: []string{"dryRun"}}, Action: faultproxy.Drop})
	r := w.Plan()
	w.MustFail(r, "plan with the dry run dropped")
	acctest.ExpectActed(t, f)
	f.Remove()

	// Real drift: data.a is set back by another tool. The plan shows a
	// change and says why; the apply fails naming the operation; destroy
	// still works.
	configMapAs(t, "tool", ns, name, `{a: "1"}`)
	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	if _, change, _ := r.Changes(); change != 1 {
		t.Fatalf("the plan of an unchanged json_patch whose effect is gone shows %d changes, want 1\n%s", change, r.Output)
	}
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || strings.Contains(d.Summary, "effect is gone")
	}
	if !warned {
		t.Fatalf("the plan does not say the patch's effect is gone: %+v", r.Warnings())
	}
	r = w.Apply()
	w.MustFail(r, "apply of a json_patch that no longer applies")
	if !r.HasError("remove /data/b") {
		t.Fatalf("the apply's error does not name the failing operation: %+v", r.Errors())
	}
	if got := acctest.MustGet(t, configMaps, ns, name).Object["data"].(map[string]any)["a"]; got != "1" {
		t.Fatalf("data.a = %v; the failed apply must leave the tool's value", got)
	}
}

// Two states patch the same field. A's patch is checked, then held on its
// way to the server while B's patch lands: the server refuses A's patch as
// bound to a version that is gone, A checks again, finds B, and refuses.
func TestAccPatchSafety_rivalRefusedAtApply(t *testing.T) {
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("rival")
	configMapAs(t, "helm", ns, name, `{level: info}`)
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	patchConfig := func(address, level, conn string) string {
		return fmt.Sprintf(`
resource "k8sconnect_patch" %q {
  target = { api_version = "v1", kind = "ConfigMap", name = %q, namespace = %q }
  patch  = "data: {level: %s}"
  take_ownership = true
  %s
}
`, address, name, ns, level, conn)
	}
	a := acctest.NewWorkdir(t)
	a.Write(patchConfig("a", "debug", proxiedConnection(proxy, cluster)))
	a.Cleanup()
	t.Cleanup(proxy.Clear)
	b := acctest.NewWorkdir(t)
	b.Write(patchConfig("b", "warn", acctest.Connection(t)))
	b.Cleanup()

	held := proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", name), Action: faultproxy.Delay, Delay: 4 * time.Second, Times: 1})
	done := make(chan acctest.Result, 1)
	go func() { done <- a.Apply() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := held.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.MustApply()
	r := <-done
	a.MustFail(r, "apply of a patch whose field a rival took meanwhile")
	if !r.HasError("Another k8sconnect_patch owns these fields") {
		t.Fatalf("the apply does not refuse the rival: %+v", r.Errors())
	}
	live := acctest.MustGet(t, configMaps, ns, name)
	if got := live.Object["data"].(map[string]any)["level"]; got != "warn" {
		t.Fatalf("data.level = %v, want B's warn kept", got)
	}
	if got := acctest.PatchManagers(live); len(got) != 1 || !strings.HasPrefix(got[0], "k8sconnect-patch-") {
		t.Fatalf("patch managers on the target = %q, want only B's", got)
	}
	if got := a.StateList(); len(got) != 0 {
		t.Fatalf("the refused patch is in state: %q", got)
	}
}
