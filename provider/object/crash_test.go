package object_test

// Crash safety (docs/adr/0001-crash-safe-create.md), proven against the real
// API server through internal/testing/faultproxy: a create, update or delete cut short
// at each point fails the run (non-zero exit), and running the engine again
// converges on the same object (same UID), exactly once in state, with nothing
// left over in the namespace and nothing left to plan.
//
// A persistent fault makes the failed run last about 30 s (the provider sends
// a request of unknown fate again, with backoff, for 30 s); the tests run in
// parallel, so the suite takes about a minute per engine.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
)

const (
	crashAddress = "k8sconnect_object.cm"
)

// crashEnv is one test's namespace, proxy and configuration directory.
type crashEnv struct {
	t       *testing.T
	ns      string
	name    string
	proxy   *faultproxy.Proxy
	obj     acctest.CrashObject // the ConfigMap, and its checks in the cluster
	w       *acctest.Workdir
	cluster *localcluster.Cluster
}

func newCrashEnv(t *testing.T) *crashEnv {
	t.Parallel()
	cluster := localcluster.Shared(t)
	e := &crashEnv{
		t:       t,
		ns:      acctest.Namespace(t),
		name:    acctest.Name("crash"),
		proxy:   faultproxy.New(t, cluster.Host, cluster.CAPEM),
		w:       acctest.NewWorkdir(t),
		cluster: cluster,
	}
	e.obj = acctest.CrashObject{T: t, Namespace: e.ns, Name: e.name}
	// A killed create's marker protects its object for this long; the
	// default (60 s) would only slow the re-runs down.
	e.w.SetEnv("K8SCONNECT_CREATE_PENDING_LEASE", "3s")
	e.write("one")
	e.w.Cleanup()
	t.Cleanup(e.proxy.Clear) // runs before the destroy registered above
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range e.proxy.Requests() {
				t.Logf("proxy: %s", r)
			}
		}
	})
	return e
}

// write configures one ConfigMap, reached through the proxy.
func (e *crashEnv) write(greeting string) {
	e.w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
  }
}
`, e.name, e.ns, greeting, e.proxy.URL, string(e.proxy.CAPEM), e.cluster.Token))
}

// timed runs one engine command and logs how long it took.
func (e *crashEnv) timed(what string, run func() acctest.Result) acctest.Result {
	e.t.Helper()
	begin := time.Now()
	r := run()
	e.t.Logf("%s %s: %v in %s", acctest.Engine(), what, r.Err, time.Since(begin).Round(100*time.Millisecond))
	return r
}

func (e *crashEnv) mustSucceed(r acctest.Result, what string) {
	e.t.Helper()
	if r.Err != nil {
		e.t.Fatalf("%s %s failed: %v\n%s", acctest.Engine(), what, r.Err, r.Output)
	}
}

func (e *crashEnv) expectState(want ...string) {
	e.t.Helper()
	got := e.w.StateList()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		e.t.Fatalf("%s state list = %q, want %q", acctest.Engine(), got, want)
	}
}

// stateGreeting is the greeting in the state's yaml_body.
func (e *crashEnv) stateGreeting() string {
	e.t.Helper()
	r := e.w.Run("show", "-json")
	if r.Err != nil {
		e.t.Fatalf("%s show -json: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	var show struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	out := r.Output[strings.Index(r.Output, "{"):]
	if err := json.Unmarshal([]byte(out), &show); err != nil {
		e.t.Fatalf("%s show -json: %v\n%s", acctest.Engine(), err, r.Output)
	}
	for _, res := range show.Values.RootModule.Resources {
		if res.Address == crashAddress {
			body, _ := res.Values["yaml_body"].(string)
			for _, l := range strings.Split(body, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "greeting: "); ok {
					return v
				}
			}
		}
	}
	e.t.Fatalf("%s is not in the state", crashAddress)
	return ""
}

// expectConverged checks the end of a recovering run: exactly one object,
// with uid (when given), the greeting, our owner id and no marker; exactly one
// resource in state; nothing to plan.
func (e *crashEnv) expectConverged(uid, greeting string) string {
	e.t.Helper()
	uid = e.obj.ExpectConverged(uid, greeting)
	e.expectState(crashAddress)
	e.w.MustPlanNoChanges()
	return uid
}

func (e *crashEnv) expectPlan(wantAdd, wantChange, wantRemove int) {
	e.t.Helper()
	r := e.w.Run("plan", "-input=false", "-json")
	if add, change, remove := r.Changes(); r.Err != nil || add != wantAdd || change != wantChange || remove != wantRemove {
		e.t.Fatalf("%s plan: want +%d ~%d -%d, have +%d ~%d -%d (%v)\n%s", acctest.Engine(),
			wantAdd, wantChange, wantRemove, add, change, remove, r.Err, r.Output)
	}
}

// 1. The connection fails before the apply reaches the server: nothing exists,
// nothing is in state, and the re-run is an ordinary create.
func TestAccCrash_createDroppedBeforeTheServer(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Drop})
	r := e.timed("apply (every apply dropped)", e.w.Apply)
	e.w.MustFail(r, "apply")
	acctest.ExpectActed(e.t, f)
	e.obj.ExpectNoObjects()
	e.expectState()

	f.Remove()
	e.mustSucceed(e.timed("apply (recovering)", e.w.Apply), "apply")
	e.expectConverged("", "one")
}

// 2. The server applies the object, the response is lost (every time): the
// object exists with the marker and is in no state; the re-run adopts it.
func TestAccCrash_createResponseLost(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Cut})
	r := e.timed("apply (every apply's response cut)", e.w.Apply)
	e.w.MustFail(r, "apply")
	acctest.ExpectActed(e.t, f)
	uid := e.obj.ExpectOrphan()
	e.expectState()

	f.Remove()
	e.mustSucceed(e.timed("apply (recovering)", e.w.Apply), "apply")
	e.expectConverged(uid, "one")
}

// 3. The first step (with the marker) succeeds, the second never gets
// through: the re-run adopts the marked object.
func TestAccCrash_createSecondStepFails(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Drop})
	r := e.timed("apply (second step dropped)", e.w.Apply)
	e.w.MustFail(r, "apply")
	acctest.ExpectActed(e.t, f)
	uid := e.obj.ExpectOrphan()
	e.expectState()

	f.Remove()
	e.mustSucceed(e.timed("apply (recovering)", e.w.Apply), "apply")
	e.expectConverged(uid, "one")
}

// 3b. The second step lands but its response is lost for longer than the
// retry window. The run reads the object once more: it carries our id, no
// marker and the UID the first step created, so the create did finish, and the
// same run succeeds, with no import.
func TestAccCrash_createSecondStepResponseLost(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Cut})
	r := e.timed("apply (second step's response cut)", e.w.Apply)
	acctest.ExpectActed(e.t, f)
	e.mustSucceed(r, "apply")
	f.Remove()
	e.expectConverged("", "one")
}

// 4. The engine and its provider plugin are killed (SIGKILL) while the first
// step's response is held: the object has landed with the marker; the re-run
// adopts it.
func TestAccCrash_createKilledAfterTheApply(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyMarked(), Action: faultproxy.Pause, Times: 1})
	cmd, out := e.w.Start("apply", "-auto-approve", "-input=false", "-json")
	acctest.KillWhileHeld(t, cmd, out, f, filepath.Base(cmd.Path), "terraform-provider-k8sconnect")

	uid := e.obj.ExpectOrphan()
	e.expectState()
	e.mustSucceed(e.timed("apply (recovering)", e.w.Apply), "apply")
	e.expectConverged(uid, "one")
}

// A connection that stops forwarding answers (a proxy or load balancer gone
// half dead) holds a request forever unless the provider gives the attempt
// up. A read so stalled is sent again, and the plan completes; the hold
// outlasts the run, so only the retry can have answered it.
func TestAccCrash_stalledReadIsSentAgain(t *testing.T) {
	e := newCrashEnv(t)
	e.mustSucceed(e.timed("apply", e.w.Apply), "apply")
	e.w.SetEnv(durations.AttemptTimeoutEnv, "3s")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/configmaps/" + e.name},
		Action: faultproxy.Pause, Times: 1})
	defer f.Release()
	begin := time.Now()
	e.expectPlan(0, 0, 0)
	acctest.ExpectActed(e.t, f)
	if f.Held() != 1 {
		t.Fatalf("the stalled read was answered (%d held): the test proves nothing", f.Held())
	}
	if took := time.Since(begin); took > time.Minute {
		t.Errorf("the plan took %s with a 3 s attempt timeout", took)
	}
}

// A create whose answer stalls after the server has applied it is a write
// with an unknown outcome: the provider gives it up, reads the object it may
// have made, and finishes the create; one object, made once.
func TestAccCrash_stalledCreateIsSettledByReading(t *testing.T) {
	e := newCrashEnv(t)
	e.w.SetEnv(durations.AttemptTimeoutEnv, "3s")
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyMarked(), Action: faultproxy.Pause, Times: 1})
	defer f.Release()
	r := e.timed("apply (the create's answer stalls)", e.w.Apply)
	acctest.ExpectActed(e.t, f)
	e.mustSucceed(r, "apply")
	e.expectConverged("", "one")
}

// A fault that clears within the retry window does not fail the run at all.
func TestAccCrash_transientFaultIsRetriedWithinTheRun(t *testing.T) {
	e := newCrashEnv(t)
	drop := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyMarked(), Action: faultproxy.Drop, Times: 2})
	cut := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Cut, Times: 2})
	e.mustSucceed(e.timed("apply (two drops, two cuts)", e.w.Apply), "apply")
	acctest.ExpectActed(e.t, drop)
	acctest.ExpectActed(e.t, cut)
	e.expectConverged("", "one")
}

// ADR 0001 point 5: an outage shorter than the retry window (30 s) does not
// fail the run. Here every apply is dropped for 15 s from the first one.
func TestAccCrash_outageShorterThanTheRetryWindowIsAbsorbed(t *testing.T) {
	e := newCrashEnv(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Drop})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if f.WaitHits(ctx, 1) == nil {
			time.Sleep(15 * time.Second)
		}
		f.Remove()
	}()
	e.mustSucceed(e.timed("apply (applies dropped for 15 s)", e.w.Apply), "apply")
	acctest.ExpectActed(e.t, f)
	e.expectConverged("", "one")
}

// A failed update (the server applies it, the response is lost every time)
// keeps the previous state and does not taint: the next plan is an in-place
// update, and re-running converges on the same object.
func TestAccCrash_updateResponseLost(t *testing.T) {
	e := newCrashEnv(t)
	e.mustSucceed(e.timed("apply (create)", e.w.Apply), "apply")
	uid := e.expectConverged("", "one")

	e.write("two")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Cut})
	r := e.timed("apply (update, every response cut)", e.w.Apply)
	e.w.MustFail(r, "apply")
	acctest.ExpectActed(e.t, f)
	e.expectState(crashAddress)
	if g := e.stateGreeting(); g != "one" {
		t.Fatalf("the failed update changed the state: greeting %q, want the previous %q", g, "one")
	}
	f.Remove()
	e.expectPlan(0, 1, 0) // in place: no taint, no replacement
	if objs := e.obj.Objects(); string(objs[e.name].UID) != uid || len(objs) != 1 {
		t.Fatalf("after the failed update: want only ConfigMap %s with UID %s, have %v", e.name, uid, objs)
	}

	e.mustSucceed(e.timed("apply (recovering)", e.w.Apply), "apply")
	e.expectConverged(uid, "two")
}

// Drop: the delete never reaches the server, so destroy fails, the resource
// stays in state and re-running finishes it. Cut: the delete lands but its
// answer is lost; the retry reads the object first, finds it gone, and the
// same run succeeds.
func TestAccCrash_deleteFails(t *testing.T) {
	t.Parallel()
	for _, action := range []faultproxy.Action{faultproxy.Drop, faultproxy.Cut} {
		t.Run(action.String(), func(t *testing.T) {
			e := newCrashEnv(t)
			e.mustSucceed(e.timed("apply (create)", e.w.Apply), "apply")
			uid := e.expectConverged("", "one")

			f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.DeleteOf("configmaps", e.name), Action: action})
			r := e.timed("destroy (delete "+action.String()+")", e.w.Destroy)
			if action == faultproxy.Cut {
				// The delete landed; its retry reads the object first, finds
				// it gone, and the same run succeeds.
				e.mustSucceed(r, "destroy")
				acctest.ExpectActed(e.t, f)
				e.obj.ExpectNoObjects()
				e.expectState()
				return
			}
			e.w.MustFail(r, "destroy")
			acctest.ExpectActed(e.t, f)
			e.expectState(crashAddress)
			if objs := e.obj.Objects(); string(objs[e.name].UID) != uid || len(objs) != 1 {
				t.Fatalf("after a delete that never reached the server: want only ConfigMap %s with UID %s, have %v", e.name, uid, objs)
			}

			f.Remove()
			e.mustSucceed(e.timed("destroy (recovering)", e.w.Destroy), "destroy")
			e.obj.ExpectNoObjects()
			e.expectState()
			e.w.MustPlanNoChanges("-destroy")
		})
	}
}
