package waiting

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var pvcs = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}

func fakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{pvcs: "PersistentVolumeClaimList"}, objs...)
}

func pvc(t *testing.T, phase string) *unstructured.Unstructured {
	u := obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: ns, resourceVersion: "1"}}`)
	if phase != "" {
		_ = unstructured.SetNestedField(u.Object, phase, "status", "phase")
	}
	return u
}

func boundSpec(t *testing.T) Spec {
	fvs, err := NewFieldValues(map[string]string{"status.phase": "Bound"})
	if err != nil {
		t.Fatal(err)
	}
	return Spec{FieldValues: fvs}
}

func TestUntilWaitsForTheObjectToAppearAndChangeThroughTheWatch(t *testing.T) {
	c := fakeClient()
	fw := watch.NewFake()
	c.PrependWatchReactor("persistentvolumeclaims", func(k8stesting.Action) (bool, watch.Interface, error) { return true, fw, nil })
	go func() {
		fw.Add(pvc(t, "Pending"))
		fw.Add(obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: other}, status: {phase: Bound}}`))
		fw.Modify(pvc(t, "Bound"))
	}()
	spec := boundSpec(t)
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.State.Met || !res.Watched || res.Object.GetName() != "data" {
		t.Errorf("got %+v", res)
	}
}

func TestUntilPollsWhenTheWatchIsRefused(t *testing.T) {
	c := fakeClient(pvc(t, "Pending"))
	c.PrependWatchReactor("persistentvolumeclaims", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(pvcs.GroupResource(), "", errors.New("no watch for you"))
	})
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = c.Resource(pvcs).Namespace("ns").Update(context.Background(), pvc(t, "Bound"), metav1.UpdateOptions{})
	}()
	spec := boundSpec(t)
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate,
		Options{Timeout: 5 * time.Second, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.State.Met || res.Watched {
		t.Errorf("got %+v", res)
	}
}

func TestUntilPollsWhenListingIsRefused(t *testing.T) {
	c := fakeClient(pvc(t, "Bound"))
	c.PrependReactor("list", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(pvcs.GroupResource(), "", errors.New("get only"))
	})
	spec := boundSpec(t)
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{Timeout: 5 * time.Second})
	if err != nil || !res.State.Met {
		t.Fatalf("got %+v, %v", res, err)
	}
}

// The watch may lag a write that already satisfied the wait; the deadline
// reads the object once more instead of failing on stale news.
func TestUntilChecksOnceMoreAtTheDeadline(t *testing.T) {
	c := fakeClient(pvc(t, "Bound"))
	c.PrependReactor("list", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		list := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*pvc(t, "Pending")}}
		list.SetResourceVersion("1")
		return true, list, nil
	})
	fw := watch.NewFake() // never says anything
	c.PrependWatchReactor("persistentvolumeclaims", func(k8stesting.Action) (bool, watch.Interface, error) { return true, fw, nil })
	spec := boundSpec(t)
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{Timeout: 50 * time.Millisecond})
	if err != nil || !res.State.Met {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestUntilTimesOutWithTheLastState(t *testing.T) {
	c := fakeClient(pvc(t, "Pending"))
	spec := boundSpec(t)
	var mu sync.Mutex
	var progress []string
	begin := time.Now()
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{
		Timeout: 200 * time.Millisecond, ProgressInterval: 40 * time.Millisecond,
		Progress: func(st State, elapsed time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, st.Summary)
		},
	})
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("want a TimeoutError, got %v", err)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("took %s for a 200ms timeout", took)
	}
	if res.State.Summary != `status.phase is "Pending", want "Bound"` || te.Last.Object == nil {
		t.Errorf("last state: %+v", res)
	}
	if !strings.Contains(err.Error(), "not done after 200ms") {
		t.Errorf("error: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 2 || progress[0] != `status.phase is "Pending", want "Bound"` {
		t.Errorf("progress reports: %q", progress)
	}
}

func TestUntilStopsAtOnceWhenStuck(t *testing.T) {
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	job := obj(t, `{apiVersion: batch/v1, kind: Job, metadata: {name: migrate, namespace: ns},
	  status: {conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}}`)
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{jobs: "JobList"}, job)
	spec := Spec{Condition: "Complete"}
	_, err := Until(context.Background(), c.Resource(jobs).Namespace("ns"), "migrate", spec.Evaluate, Options{Timeout: time.Minute})
	var se *StuckError
	if !errors.As(err, &se) {
		t.Fatalf("want a StuckError, got %v", err)
	}
}

func TestUntilRelistsWhenTheResourceVersionExpired(t *testing.T) {
	c := fakeClient(pvc(t, "Pending"))
	var mu sync.Mutex
	watches := 0
	c.PrependWatchReactor("persistentvolumeclaims", func(k8stesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches++
		fw := watch.NewFakeWithChanSize(1, false)
		if watches == 1 {
			// While this watch was down the claim was bound; the server no longer
			// has the events, only a fresh list will show it.
			// (The tracker, not the client: the fake holds its lock while reacting.)
			_ = c.Tracker().Update(pvcs, pvc(t, "Bound"), "ns")
			fw.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
		}
		return true, fw, nil
	})
	spec := boundSpec(t)
	res, err := Until(context.Background(), c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{Timeout: 5 * time.Second})
	if err != nil || !res.State.Met || !res.Watched {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestUntilHonoursCancellation(t *testing.T) {
	c := fakeClient(pvc(t, "Pending"))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	spec := boundSpec(t)
	_, err := Until(ctx, c.Resource(pvcs).Namespace("ns"), "data", spec.Evaluate, Options{Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("got %v", err)
	}
}
