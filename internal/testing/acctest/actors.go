package acctest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// The wait tests of every engine play the cluster's other actors: a kubelet
// that lets held pods run, a cloud controller that writes a load balancer's
// status. These are those actors, and the checks on what they caused.

var (
	podsResource        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	servicesResource    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMapsResource  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploymentsResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Later runs f in the background once the object exists (waiting for it at
// most within), a few seconds after it appears, so that whatever waits on
// it is surely watching; the test does not end before f has run.
func Later(t testing.TB, gvr schema.GroupVersionResource, ns, name string, within time.Duration, f func(*unstructured.Unstructured) error) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(wg.Wait)
	ri := Dynamic(t).Resource(gvr).Namespace(ns)
	go func() {
		defer wg.Done()
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				t.Errorf("reading %s %s/%s: %v", gvr.Resource, ns, name, err)
				return
			}
			time.Sleep(3 * time.Second)
			if err := f(obj); err != nil {
				t.Errorf("acting on %s %s/%s: %v", gvr.Resource, ns, name, err)
			}
			return
		}
		t.Errorf("%s %s/%s never appeared", gvr.Resource, ns, name)
	}()
}

// ReleaseJob lets a held Job's pods run, the only release a Job allows.
func ReleaseJob(t testing.TB, ns, job string) {
	t.Helper()
	list, err := Dynamic(t).Resource(podsResource).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("Job %s has no pods to release", job)
	}
	for _, p := range list.Items {
		PatchAs(t, "test", podsResource, ns, p.GetName(),
			fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation))
	}
}

// SetLoadBalancerHostname writes a Service's status as a cloud controller
// would.
func SetLoadBalancerHostname(t testing.TB, ns, name, hostname string) error {
	ri := Dynamic(t).Resource(servicesResource).Namespace(ns)
	for attempt := 0; ; attempt++ {
		svc, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedSlice(svc.Object, []any{map[string]any{"hostname": hostname}}, "status", "loadBalancer", "ingress")
		_, err = ri.UpdateStatus(context.Background(), svc, metav1.UpdateOptions{FieldManager: "test-cloud-controller"})
		if !apierrors.IsConflict(err) || attempt == 5 {
			return err
		}
	}
}

// ConfigMapHas checks one key of a ConfigMap's data.
func ConfigMapHas(t testing.TB, ns, name, key, want string) error {
	cm, err := Get(t, configMapsResource, ns, name)
	if err != nil || cm == nil {
		return fmt.Errorf("ConfigMap %s/%s is not in the cluster (err=%v)", ns, name, err)
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != want {
		return fmt.Errorf("ConfigMap %s/%s data.%s = %q, want %q", ns, name, key, got, want)
	}
	return nil
}

// CreatedAfterAvailable proves an ordering: the dependent Deployment was
// created no earlier than the moment the first one had all its replicas
// available.
func CreatedAfterAvailable(t testing.TB, ns, first string, replicas int64, dependent string) error {
	web, err := Get(t, deploymentsResource, ns, first)
	if err != nil || web == nil {
		return fmt.Errorf("deployment %s: %v", first, err)
	}
	if ready, _, _ := unstructured.NestedInt64(web.Object, "status", "readyReplicas"); ready != replicas {
		return fmt.Errorf("deployment %s has %d ready replicas, want %d", first, ready, replicas)
	}
	after, err := Get(t, deploymentsResource, ns, dependent)
	if err != nil || after == nil {
		return fmt.Errorf("deployment %s was not created: %v", dependent, err)
	}
	conds, _, _ := unstructured.NestedSlice(web.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Available" || m["status"] != "True" {
			continue
		}
		at, _ := m["lastTransitionTime"].(string)
		availableAt, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return err
		}
		if created := after.GetCreationTimestamp().Time; created.Before(availableAt) {
			return fmt.Errorf("%s was created at %s, before %s became available at %s", dependent, created, first, availableAt)
		}
		return nil
	}
	return fmt.Errorf("deployment %s has no Available=True condition", first)
}
