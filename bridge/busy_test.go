package bridge_test

import (
	"net/http"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// What a load balancer or gateway in front of the API server answers while
// its servers restart: 429 or 503 without Retry-After (ADR 0014 point 7),
// here twice, on the one request each operation depends on. Under Pulumi as
// under terraform (TestAccAnswers' rows): the preview, the up that creates
// and the one that updates, the refresh and the destroy each succeed, the
// request sent again; the object is created once and deleted once, as the
// API server records it.
func TestPulumiBusyAnswersAreSentAgain(t *testing.T) {
	e := newPulumiCrash(t)
	history := acctest.WatchConfigMaps(t, e.ns, e.name)
	busy := func(m faultproxy.Match, status int) *faultproxy.Fault {
		return e.proxy.Inject(faultproxy.Rule{Match: m, Action: faultproxy.Answer, Status: status, Times: 2})
	}
	answered := func(f *faultproxy.Fault, what string) {
		t.Helper()
		if f.Hits() != 2 {
			t.Errorf("%s: the busy answer was given %d time(s), want 2: the operation did not meet it", what, f.Hits())
		}
		f.Remove()
	}
	object := "/configmaps/" + e.name

	f := busy(faultproxy.Match{Method: http.MethodPatch, Path: object, Query: []string{"dryRun=All"}}, http.StatusServiceUnavailable)
	e.expectPreview(map[string]int{"create": 2}) // the object and the stack
	answered(f, "preview")

	f = busy(faultproxy.ApplyOf("configmaps", e.name), http.StatusTooManyRequests)
	e.mustSucceed(e.up("create"), "up (create)")
	answered(f, "up (create)")
	uids := history.ExpectCreatedOnce(t, []string{e.name})

	e.write("two")
	f = busy(faultproxy.ApplyOf("configmaps", e.name), http.StatusServiceUnavailable)
	e.mustSucceed(e.up("update"), "up (update)")
	answered(f, "up (update)")
	if err := acctest.ConfigMapHas(t, e.ns, e.name, "greeting", "two"); err != nil {
		t.Error(err)
	}

	f = busy(faultproxy.Match{Method: http.MethodGet, Path: object}, http.StatusServiceUnavailable)
	e.mustSucceed(e.timed("refresh", "refresh", "--yes", "--skip-preview"), "refresh")
	answered(f, "refresh")
	e.expectInState(1)

	f = busy(faultproxy.DeleteOf("configmaps", e.name), http.StatusTooManyRequests)
	e.mustSucceed(e.destroy("busy"), "destroy")
	answered(f, "destroy")
	history.ExpectDeletedOnce(t, uids)
	e.expectInState(0)
}
