package bridge_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/provider/object"
)

const killedObjects = 200

var adoptRun = regexp.MustCompile(object.AdoptRunEnv + `=(\S+) terraform apply`)

// provider/object's TestAccKilledApplyUnderARemoteBackend under Pulumi: `pulumi
// up` of 200 objects is killed halfway, with creates in flight, one of them
// finished in the cluster but not in the stack. Pulumi saves its checkpoint
// after every step, so a kill loses only the creates in flight; the recovery
// is what the errors tell the user: `pulumi cancel` for the lock, then the one
// setting the refusal of the finished create prints. Every object is then
// created exactly once (same UIDs), all 200 are in the stack, and nothing is
// left to preview.
func TestPulumiKilledUp(t *testing.T) {
	e := newPulumiCrash(t)
	prefix := e.name + "-"
	names := e.writeConfigMaps(prefix, killedObjects)
	history := acctest.WatchConfigMaps(t, e.ns, prefix)

	// Each apply request waits a second, so that many creates are in flight
	// at any moment and the kill meets some of them between their steps.
	slow := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", prefix), Action: faultproxy.Delay, Delay: time.Second})
	cmd := e.command("up", "--yes", "--skip-preview", "--non-interactive", "--stack", crashStack)
	out := acctest.StartOwned(t, cmd)
	deadline := time.Now().Add(3 * time.Minute)
	for history.Created() < killedObjects/2 {
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("pulumi up never got halfway (created %d):\n%s", history.Created(), out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The kill comes while the answer to a create's second step is held:
	// that object is finished in the cluster and its step never saved, the
	// one kind of leftover a per-step checkpoint still loses. (A request
	// meets the first rule that matches it: the delay goes first.)
	slow.Remove()
	held := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: http.MethodPatch, Path: "/configmaps/" + prefix,
		NoQuery: []string{"dryRun"}, NoBody: acctest.AnnotationCreatePending}, Action: faultproxy.Pause, Times: 1})
	acctest.KillWhileHeld(t, cmd, out, held, "pulumi", "pulumi-language-yaml", "pulumi-resource-k8sconnect")
	held.Release()
	_, pending := e.export()
	t.Logf("killed: %d objects created, %d in the stack, %d pending operations", history.Created(), len(e.objectsInState()), len(pending))
	if len(e.objectsInState()) >= killedObjects {
		t.Fatal("the kill came too late to test anything")
	}

	// The held create is refused, naming the killed run; the user lets
	// the next up take over what that run left.
	r := e.upAfterKill()
	e.mustFail(r, "up after the kill, with an object the killed run finished and never saved")
	m := adoptRun.FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("pulumi up after the kill failed, and not by refusing what the killed run left:\n%s", lastLines(r.out, 40))
	}
	e.env = append(e.env, object.AdoptRunEnv+"="+m[1])
	r = e.up("taking over what the killed run " + m[1] + " left")
	e.mustSucceed(r, "up")
	uids := history.ExpectCreatedOnce(t, names)
	acctest.ExpectLive(t, e.ns, prefix, uids)
	if _, pending := e.export(); len(pending) > 0 {
		e.mustSucceed(e.timed("refresh --clear-pending-creates", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"), "refresh")
	}
	e.expectInState(killedObjects)
	e.expectPreview(map[string]int{"same": killedObjects + 1})
	history.ExpectCreatedOnce(t, names)
}
