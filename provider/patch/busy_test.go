package patch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// A target that a controller keeps changing (a Deployment rolling out writes
// its status many times a second) refuses a patch bound to the version that
// was checked, again and again. The patch reads the target, checks it for
// rivals and sends again, backing off, until a send lands. Here the first six
// sends reach the server only after another manager has changed the target,
// so each is refused; the seventh lands. Five sends a few milliseconds apart
// would all be refused here and fail the apply.
func TestAccPatch_busyTargetTriedUntilThePatchLands(t *testing.T) {
	p := newPatchCrash(t)
	late := p.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", p.name), Action: faultproxy.Delay,
		Delay: 300 * time.Millisecond, Times: 6})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	ri := acctest.Dynamic(t).Resource(configMaps).Namespace(p.ns)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			body := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/tick":"%d"}}}`, i)
			if _, err := ri.Patch(context.Background(), p.name, ktypes.MergePatchType, []byte(body),
				metav1.PatchOptions{FieldManager: "busy-controller"}); err != nil {
				t.Errorf("busy-controller's write %d: %v", i, err)
				return
			}
		}
	}()
	r := p.w.Apply()
	close(stop)
	wg.Wait()
	if r.Err != nil {
		t.Fatalf("%s apply against a busy target: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
	if late.Hits() != 6 {
		t.Fatalf("%d sends were delayed, want all 6 the rule holds back", late.Hits())
	}
	p.landedUnderOneManager()
	p.expectConverged("")
}
