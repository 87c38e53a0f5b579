package object_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/object"
)

const killedObjects = 200

var adoptCommand = regexp.MustCompile(object.AdoptRunEnv + `=(\S+) terraform apply`)

// An apply of 200 objects with its state in the cluster (the `kubernetes`
// backend, saved about every 20 s during an apply) is killed after a save,
// with objects created since and creates in flight. The next apply must not
// need an import per object: the user frees the engine's lock as its error
// says, the plan names the killed run and the one setting that takes its
// objects over, refusing them until then (nothing applied, and not for another
// run's id), and with that setting one apply converges: every object created
// exactly once (same UIDs), all in state, nothing left to plan.
func TestAccKilledApplyUnderARemoteBackend(t *testing.T) {
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("killed") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	backend := acctest.NewKubernetesBackend(t, ns, strings.TrimSuffix(prefix, "-"))
	w := acctest.NewWorkdir(t)
	w.SetEnv("K8SCONNECT_CREATE_PENDING_LEASE", "3s")
	config, names := configMapsVia(killedObjects, prefix, ns, proxy, cluster.Token)
	w.Write(backend.Block() + config)
	backend.Init(w)
	w.Cleanup()
	history := acctest.WatchConfigMaps(t, ns, prefix)

	// Each apply request waits a second, so the run lasts about 40 s: long
	// enough for the engine to save the state once, with creates after it.
	slow := proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", prefix), Action: faultproxy.Delay, Delay: time.Second})
	cmd, out := w.Start("apply", "-auto-approve", "-input=false", "-json")
	deadline := time.Now().Add(3 * time.Minute)
	saved := 0
	for saved == 0 || history.Created() < saved+30 {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the apply never got past its first save with 30 more objects (saved %d, created %d):\n%s",
				saved, history.Created(), out)
		}
		time.Sleep(200 * time.Millisecond)
		saved = backend.Saved()
	}
	if _, err := faultproxy.KillTree(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	slow.Remove()
	saved, created := backend.Saved(), history.Created()
	t.Logf("%s killed: %d objects created, %d in the saved state", acctest.Engine(), created, saved)
	if created >= killedObjects || created-saved < 10 {
		t.Fatalf("the kill came too late to test anything: %d created, %d saved", created, saved)
	}

	// The killed run holds the backend's lock; the engine says how to free it.
	r := w.Apply()
	w.MustFail(r, "apply right after the kill")
	backend.ForceUnlock(w, r)

	// Without the setting, and with another run's, the objects the killed
	// run made after its save are refused at plan, each naming the run.
	var run string
	var refused int
	for _, setting := range []string{"", "20260101T000000Z-00000000"} {
		w.SetEnv(object.AdoptRunEnv, setting)
		before := history.Created()
		r = w.Apply()
		w.MustFail(r, "apply of the objects a killed run left, "+object.AdoptRunEnv+"="+setting)
		refused = 0
		for _, d := range r.Errors() {
			m := adoptCommand.FindStringSubmatch(d.Detail)
			if d.Summary != "Object already exists" || m == nil {
				t.Fatalf("an error that is not the refusal of a leftover object naming its run:\n%s: %s", d.Summary, d.Detail)
			}
			if run != "" && m[1] != run {
				t.Fatalf("the leftover objects name two runs, %s and %s", run, m[1])
			}
			run = m[1]
			refused++
		}
		if refused < 10 || refused > created-saved {
			t.Fatalf("%d objects refused, want the %d created after the save, less those still unfinished", refused, created-saved)
		}
		t.Logf("%s=%q: %d objects refused, naming the run %s", object.AdoptRunEnv, setting, refused, run)
		if history.Created() != before {
			t.Fatalf("a refused plan created %d objects", history.Created()-before)
		}
	}

	w.SetEnv(object.AdoptRunEnv, run)
	r = w.MustApply()
	taken := 0
	for _, d := range r.Warnings() {
		if d.Summary == "Taking over an object a killed apply left" {
			taken++
		}
	}
	t.Logf("with %s=%s: %d objects taken over", object.AdoptRunEnv, run, taken)
	if taken < refused {
		t.Errorf("%d takeovers announced, want one for each of the %d objects refused:\n%s", taken, refused, r.Output)
	}
	uids := history.ExpectCreatedOnce(t, names)
	acctest.ExpectLive(t, ns, prefix, uids)
	if got := len(w.StateList()); got != killedObjects {
		t.Fatalf("%d objects in state, want %d", got, killedObjects)
	}
	w.SetEnv(object.AdoptRunEnv, "")
	w.MustPlanNoChanges()
}
