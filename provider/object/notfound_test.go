package object_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A 404 that is not the API server's word on the object (an ingress or a
// load balancer in front of the server answers its own HTML page) is no
// verdict: the refresh keeps the object in state and the plan creates
// nothing, where it used to drop it and plan a second create in a cluster
// that still holds it. Once the server answers again, nothing changes.
func TestAccObject_htmlNotFoundIsNoVerdict(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	name := acctest.Name("html404")
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	config, _ := configMapsVia(1, name+"-", ns, proxy, cluster.Token)
	w.Write(config)
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, configMaps, ns, name+"-0")

	fault := proxy.Inject(faultproxy.Rule{
		Match:  faultproxy.Match{Method: "GET", Path: "/configmaps/" + name + "-0"},
		Action: faultproxy.Answer, Status: http.StatusNotFound,
		Header: http.Header{"Content-Type": []string{"text/html"}},
		Body:   []byte("<html><body><h1>404 Not Found</h1>nginx</body></html>"),
	})
	r := w.Plan()
	if add, _, _ := r.Changes(); add > 0 {
		t.Fatalf("an HTML 404 planned a create of an object that exists:\n%s", r.Output)
	}
	if fault.Hits() == 0 {
		t.Fatal("the plan never read the object through the fault: the test proves nothing")
	}
	if !strings.Contains(r.Output, "404") && !strings.Contains(r.Output, "could not find") {
		t.Errorf("the plan should say what the server answered:\n%s", r.Output)
	}
	if got := len(w.StateList()); got != 1 {
		t.Fatalf("state holds %d objects after the plan, want 1", got)
	}
	fault.Remove()
	w.MustPlanNoChanges()
	if got := acctest.UID(t, configMaps, ns, name+"-0"); got != uid {
		t.Errorf("the ConfigMap was replaced: UID %s -> %s", uid, got)
	}
}
