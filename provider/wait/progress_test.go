package wait_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// While a wait waits, the provider log says where things stand, at INFO, every
// waiting.DefaultProgressInterval: what a user sees with TF_LOG_PROVIDER=INFO
// through the real CLI. One of three pods starts at once; the other two only
// once a progress line has surely been logged since, so the log must show
// "web: 1/3 replicas ready (...elapsed)".
func TestAccWait_progressLinesInProviderLog(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(object("web", conn, deploymentYAML(ns, "web", 3, true)) + `
resource "k8sconnect_wait" "web" {
  resource_ref = k8sconnect_object.web.resource_ref
  wait_for     = { rollout = true, timeout = "3m" }
}
`)
	w.SetEnv("TF_LOG_PROVIDER", "INFO")
	w.Cleanup()
	releaseOneThenRest(t, ns, "web", waiting.DefaultProgressInterval+2*time.Second)

	r := w.MustApply()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\[INFO\]\s+provider\.terraform-provider-k8sconnect[^:]*: web: waiting up to 3m0s for rollout`),
		regexp.MustCompile(`\[INFO\]\s+provider\.terraform-provider-k8sconnect[^:]*: web: 1/3 replicas ready \((\d+m)?\d+(\.\d)?s elapsed\)`),
		regexp.MustCompile(`\[INFO\]\s+provider\.terraform-provider-k8sconnect[^:]*: web: done after \S+: 3/3 replicas ready`),
	} {
		line := want.FindString(r.Output)
		if line == "" {
			t.Errorf("the %s log lacks %s:\n%s", acctest.Engine(), want, r.Output)
			continue
		}
		t.Log(line)
	}
}

// releaseOneThenRest lets one held pod of the Deployment start as soon as
// there is one, and the rest once the Deployment has had a ready replica for
// hold.
func releaseOneThenRest(t *testing.T, ns, name string, hold time.Duration) {
	t.Helper()
	podsIn := acctest.Dynamic(t).Resource(pods).Namespace(ns)
	deps := acctest.Dynamic(t).Resource(deployments).Namespace(ns)
	unhold := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation))
	release := func(most int) int {
		list, err := podsIn.List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil {
			return 0
		}
		n := 0
		for _, p := range list.Items {
			if n == most {
				break
			}
			if p.GetAnnotations()[localcluster.HoldAnnotation] == "true" {
				if _, err := podsIn.Patch(context.Background(), p.GetName(), ktypes.MergePatchType, unhold, metav1.PatchOptions{FieldManager: "test-kubelet"}); err == nil {
					n++
				}
			}
		}
		return n
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(stop); wg.Wait() })
	go func() {
		defer wg.Done()
		tick := func() bool {
			select {
			case <-stop:
				return false
			case <-time.After(500 * time.Millisecond):
				return true
			}
		}
		for tick() && release(1) == 0 {
		}
		for tick() {
			d, err := deps.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			if ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas"); ready >= 1 {
				break
			}
		}
		select {
		case <-stop:
			return
		case <-time.After(hold):
		}
		for tick() {
			release(-1)
		}
	}()
}
