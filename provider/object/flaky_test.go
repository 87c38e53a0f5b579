package object_test

// A flaky network, as users behind one see it: every connection to the API server cut at
// random moments, through internal/testing/faultproxy's Chaos, during the plan,
// apply and destroy of 120 ConfigMaps. Reads and dry
// runs are sent again by the provider's transport; writes of unknown outcome
// are settled by the resource (docs/adr/0012-network-failures.md). The plan
// must complete; apply and destroy, rerun until they succeed, must converge
// with each object created once and deleted once, as the API server itself
// records it (a watch straight to the cluster, not through the proxy).
//
// Run with: go test ./provider/object -run TestAccFlakyNetwork -v -timeout 20m
// (and K8SCONNECT_ENGINE=tofu).

import (
	"fmt"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

const (
	flakyObjects = 120
	// flakyReruns bounds the runs of apply and of destroy. Each run resends
	// what it may for 20-30 s before it fails, so a handful of runs is
	// plenty; more would hide a run that never converges.
	flakyReruns = 5
	// flakyMeanInterval is the mean time between cuts. The link users
	// reported cut about once a second, but a plan here takes a few seconds,
	// so at that rate it meets a cut or none, and an apply a handful, often
	// with no request in flight. Ten cuts a second make every phase meet
	// dozens, most with requests in flight; the assertions are the same at
	// both rates, so the faster one covers the slower, and a run at one cut
	// a second would only repeat it with fewer failures.
	flakyMeanInterval = 100 * time.Millisecond
)

func TestAccFlakyNetwork_planApplyDestroy(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("flaky") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	// A create cut between its two steps leaves its marker; a rerun takes
	// the object over once the lease has passed. The default (60 s) would
	// only slow the reruns down.
	w.SetEnv("K8SCONNECT_CREATE_PENDING_LEASE", "5s")
	config, names := configMapsVia(flakyObjects, prefix, ns, proxy, cluster.Token)
	w.Write(config)
	w.Cleanup() // after the link is fixed: cleanups run in reverse
	history := acctest.WatchConfigMaps(t, ns, prefix)
	chaos := acctest.FlakyLink(t, proxy, flakyMeanInterval)

	timed := func(what string, run func() acctest.Result) acctest.Result {
		t.Helper()
		cuts, interrupted, begin := chaos.Cuts(), chaos.Interrupted(), time.Now()
		r := run()
		t.Logf("%s %s: %v in %s; %d cut(s) meanwhile, %d with a request in flight", acctest.Engine(), what, r.Err,
			time.Since(begin).Round(100*time.Millisecond), chaos.Cuts()-cuts, chaos.Interrupted()-interrupted)
		return r
	}
	untilConverged := func(what string, run func() acctest.Result) {
		t.Helper()
		for i := 1; ; i++ {
			r := timed(fmt.Sprintf("%s, run %d", what, i), run)
			if r.Err == nil {
				return
			}
			for _, d := range r.Errors() {
				t.Logf("  error: %s: %s", d.Summary, d.Detail)
			}
			if i == flakyReruns {
				t.Fatalf("%s %s did not converge in %d runs", acctest.Engine(), what, flakyReruns)
			}
		}
	}

	r := timed("plan", w.Plan)
	if add, change, remove := r.Changes(); r.Err != nil || add != flakyObjects || change+remove != 0 {
		for _, d := range r.Errors() {
			t.Logf("  error: %s: %s", d.Summary, d.Detail)
		}
		t.Fatalf("the plan under a flaky link: want +%d, have +%d ~%d -%d (%v)", flakyObjects, add, change, remove, r.Err)
	}
	if history.Created() != 0 {
		t.Fatalf("the plan created %d objects", history.Created())
	}

	untilConverged("apply", w.Apply)
	uids := history.ExpectCreatedOnce(t, names)
	acctest.ExpectLive(t, ns, prefix, uids)
	if got := len(w.StateList()); got != flakyObjects {
		t.Fatalf("%d objects in state, want %d", got, flakyObjects)
	}
	// Still under cuts: the re-plan completes and finds nothing to do, and
	// another apply changes nothing.
	w.MustPlanNoChanges()
	untilConverged("apply again", w.Apply)
	history.ExpectCreatedOnce(t, names)
	acctest.ExpectLive(t, ns, prefix, uids)

	untilConverged("destroy", w.Destroy)
	history.ExpectDeletedOnce(t, uids)
	acctest.ExpectLive(t, ns, prefix, nil)
	if got := w.StateList(); len(got) != 0 {
		t.Fatalf("after destroy, state holds %q", got)
	}
}

// configMapsVia is n ConfigMaps named prefix0, prefix1... in ns, as one
// k8sconnect_object "cm" with count, each connected through proxy; and their
// names.
func configMapsVia(n int, prefix, ns string, proxy *faultproxy.Proxy, token string) (string, []string) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  count = %d
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s${count.index}
      namespace: %s
    data:
      greeting: hello
  YAML
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
  }
}
`, n, prefix, ns, proxy.URL, string(proxy.CAPEM), token), names
}
