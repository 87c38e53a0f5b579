package bridge_test

// k8sconnect_wait under Pulumi (ADR-016): the scenarios of
// provider/wait/resource_wait_test.go as Pulumi programs, one language each,
// asserting what their Terraform versions assert. Run with:
// go test ./bridge -run TestPulumiWait -v

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/bridge/pulumitest"
	"github.com/k8sconnect/k8sconnect/provider/acctest"
	"github.com/k8sconnect/k8sconnect/provider/localcluster"
)

var (
	waitDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	waitJobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	waitPods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	waitConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	waitServices    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

const (
	waitType   = "k8sconnect:index/wait:Wait"
	objectType = "k8sconnect:index/kubernetesObject:KubernetesObject"
)

func skipShortWait(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the provider plugin and runs pulumi: not in -short")
	}
}

// holdPods is the podAnnotations config that keeps a scenario's pods Pending
// until the test releases them.
func holdPods() pulumitest.Value {
	b, _ := json.Marshal(map[string]string{localcluster.HoldAnnotation: "true"})
	return pulumitest.Plain(string(b))
}

// Scenario 1 (TypeScript): a Deployment's rollout gates a second Deployment,
// which is created only once the first has all its replicas available.
func TestPulumiWait_rolloutGatesDependent(t *testing.T) {
	skipShortWait(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	stack := pulumitest.NewScenario(t, pulumitest.TypeScript, "wait-rollout")
	// Each pod starts 3s after it was created, as on a slow node, so the
	// rollout takes a while and the ordering is meaningful.
	waitReleasePodsAfter(t, ns, "app=web", 3*time.Second)

	res := stack.Run(pulumitest.Up, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.TokenContext),
		"namespace":      pulumitest.Plain(ns),
		"podAnnotations": holdPods(),
	})
	// web, the Wait, after, and the stack.
	expectChanges(t, res, map[string]int{"create": 4})
	if got, want := res.Outputs["waited"], "apps/v1/Deployment/"+ns+"/web"; got != want {
		t.Errorf("output waited = %v, want %q", got, want)
	}
	if got, ok := res.Outputs["status"]; ok && got != nil {
		t.Errorf("output status = %v, want none: only field waits fill it", got)
	}
	waitCreatedAfterReady(t, ns, "web", "after")

	// A finished rollout is not judged again: nothing to do.
	res = stack.Run(pulumitest.Preview, nil)
	expectChanges(t, res, map[string]int{"same": 4})
}

// Scenario 2 (Python): a Wait that times out fails `pulumi up` and keeps its
// dependent from being created, but leaves the Job alone, in the stack and in
// the cluster; the next up waits on the very same Job and succeeds.
func TestPulumiWait_timeoutLeavesObjectAndRetriesInPlace(t *testing.T) {
	skipShortWait(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	stack := pulumitest.NewScenario(t, pulumitest.Python, "wait_retry")
	jobResource := objectType + " migrate"

	res, err := stack.Try(pulumitest.Up, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.CertContext),
		"namespace":      pulumitest.Plain(ns),
		"podAnnotations": holdPods(),
		"timeout":        pulumitest.Plain("5s"),
	})
	if err == nil {
		t.Fatalf("pulumi up succeeded, but the Job's pod is held: the wait cannot have finished\n%s", res.Log)
	}
	for _, want := range []string{"Timed out waiting for Job " + ns + "/migrate", "Pods not ready", "it will not be replaced"} {
		if !strings.Contains(res.Log, want) {
			t.Errorf("the failed up does not say %q:\n%s", want, res.Log)
		}
	}
	// Only the Job is in the stack: the failed Wait is not, nor what depends on it.
	resources, pending := stack.Resources()
	if len(resources) != 1 || resources[0] != jobResource || pending != 0 {
		t.Fatalf("after the failed up the stack holds %v with %d pending operations; want only %q and none pending",
			resources, pending, jobResource)
	}
	acctest.MustNotExist(t, waitConfigMaps, ns, "after-migration")
	uid := acctest.UID(t, waitJobs, ns, "migrate")

	// The retry plans to create the Wait and the ConfigMap, and to leave the Job.
	cfg := pulumitest.Config{"timeout": pulumitest.Plain("2m")}
	res = stack.Run(pulumitest.Preview, cfg)
	expectChanges(t, res, map[string]int{"same": 2, "create": 2})

	waitReleaseJob(t, ns, "migrate")
	res = stack.Run(pulumitest.Up, cfg)
	expectChanges(t, res, map[string]int{"same": 2, "create": 2})
	if got := acctest.UID(t, waitJobs, ns, "migrate"); got != uid {
		t.Fatalf("the Job was recreated: UID %s, was %s", got, uid)
	}
	if got, want := res.Outputs["waited"], "batch/v1/Job/"+ns+"/migrate"; got != want {
		t.Errorf("output waited = %v, want %q", got, want)
	}
	if obj, err := acctest.Get(t, waitConfigMaps, ns, "after-migration"); err != nil || obj == nil {
		t.Fatalf("ConfigMap after-migration was not created once the Job completed (err=%v)", err)
	}
	resources, pending = stack.Resources()
	want := []string{jobResource, waitType + " migrated", objectType + " after-migration"}
	if strings.Join(resources, ",") != strings.Join(want, ",") || pending != 0 {
		t.Fatalf("after the retry the stack holds %v with %d pending operations; want %v", resources, pending, want)
	}
}

// Scenario 3 (Go): a field that another actor fills in later is waited for,
// passed on through the Wait's status, and a later change of it reaches the
// dependent on the next up with --refresh.
func TestPulumiWait_fieldSetLaterFlowsToDependents(t *testing.T) {
	skipShortWait(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	stack := pulumitest.NewScenario(t, pulumitest.Go, "wait-field")
	// Plays the cloud controller: once the Service exists, and the Wait is
	// surely watching, it gets a hostname.
	waitLater(t, waitServices, ns, "lb", func() error { return waitSetLoadBalancer(t, ns, "lb", "lb-1.example.com") })

	res := stack.Run(pulumitest.Up, pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.TokenContext),
		"namespace":      pulumitest.Plain(ns),
	})
	// lb, the Wait, consumer, and the stack.
	expectChanges(t, res, map[string]int{"create": 4})
	if got := res.Outputs["hostname"]; got != "lb-1.example.com" {
		t.Errorf("output hostname = %v, want lb-1.example.com", got)
	}
	waitConfigMapHas(t, ns, "consumer", "hostname", "lb-1.example.com")
	consumerUID := acctest.UID(t, waitConfigMaps, ns, "consumer")

	if err := waitSetLoadBalancer(t, ns, "lb", "lb-2.example.com"); err != nil {
		t.Fatal(err)
	}
	// Pulumi reads the cluster only on refresh: a plain preview still works
	// from the hostname the stack recorded.
	res = stack.Run(pulumitest.Preview, nil)
	expectChanges(t, res, map[string]int{"same": 4})

	// With --refresh the Wait's status is read again: the consumer, and only
	// it, is to be updated.
	res = stack.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 3, "update": 1})
	waitConfigMapHas(t, ns, "consumer", "hostname", "lb-1.example.com")

	res = stack.Run(pulumitest.Up, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 3, "update": 1})
	if got := res.Outputs["hostname"]; got != "lb-2.example.com" {
		t.Errorf("output hostname = %v, want lb-2.example.com", got)
	}
	waitConfigMapHas(t, ns, "consumer", "hostname", "lb-2.example.com")
	if got := acctest.UID(t, waitConfigMaps, ns, "consumer"); got != consumerUID {
		t.Errorf("the consumer ConfigMap was recreated: UID %s, was %s", got, consumerUID)
	}
}

// waitReleasePodsAfter lets each held pod matching selector start once it is
// delay old, as a slow kubelet would, until the test ends.
func waitReleasePodsAfter(t *testing.T, ns, selector string, delay time.Duration) {
	t.Helper()
	ri := acctest.Dynamic(t).Resource(waitPods).Namespace(ns)
	unhold := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(stop); wg.Wait() })
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			list, err := ri.List(context.Background(), metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				continue
			}
			for _, p := range list.Items {
				if p.GetAnnotations()[localcluster.HoldAnnotation] == "true" && time.Since(p.GetCreationTimestamp().Time) >= delay {
					_, _ = ri.Patch(context.Background(), p.GetName(), types.MergePatchType, unhold, metav1.PatchOptions{FieldManager: "test-kubelet"})
				}
			}
		}
	}()
}

// waitReleaseJob lets a held Job's pods run, the only release a Job allows.
func waitReleaseJob(t *testing.T, ns, job string) {
	t.Helper()
	list, err := acctest.Dynamic(t).Resource(waitPods).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatalf("Job %s has no pods to release", job)
	}
	for _, p := range list.Items {
		acctest.PatchAs(t, "test", waitPods, ns, p.GetName(),
			fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation))
	}
}

// waitLater runs f in the background a few seconds after the object appears;
// the test does not end before it has.
func waitLater(t *testing.T, gvr schema.GroupVersionResource, ns, name string, f func() error) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(wg.Wait)
	ri := acctest.Dynamic(t).Resource(gvr).Namespace(ns)
	go func() {
		defer wg.Done()
		for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			_, err := ri.Get(context.Background(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				t.Errorf("reading %s %s/%s: %v", gvr.Resource, ns, name, err)
				return
			}
			time.Sleep(3 * time.Second)
			if err := f(); err != nil {
				t.Errorf("acting on %s %s/%s: %v", gvr.Resource, ns, name, err)
			}
			return
		}
		t.Errorf("%s %s/%s never appeared", gvr.Resource, ns, name)
	}()
}

// waitSetLoadBalancer writes a Service's status as a cloud controller would.
func waitSetLoadBalancer(t *testing.T, ns, name, hostname string) error {
	ri := acctest.Dynamic(t).Resource(waitServices).Namespace(ns)
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

func waitConfigMapHas(t *testing.T, ns, name, key, want string) {
	t.Helper()
	cm, err := acctest.Get(t, waitConfigMaps, ns, name)
	if err != nil || cm == nil {
		t.Fatalf("ConfigMap %s/%s is not in the cluster (err=%v)", ns, name, err)
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != want {
		t.Fatalf("ConfigMap %s/%s data.%s = %q, want %q", ns, name, key, got, want)
	}
}

// waitCreatedAfterReady proves the ordering: the dependent was created no
// earlier than the moment the first Deployment had all its replicas available.
func waitCreatedAfterReady(t *testing.T, ns, first, dependent string) {
	t.Helper()
	web, err := acctest.Get(t, waitDeployments, ns, first)
	if err != nil || web == nil {
		t.Fatalf("deployment %s: %v", first, err)
	}
	if ready, _, _ := unstructured.NestedInt64(web.Object, "status", "readyReplicas"); ready != 3 {
		t.Fatalf("deployment %s has %d ready replicas, want 3", first, ready)
	}
	after, err := acctest.Get(t, waitDeployments, ns, dependent)
	if err != nil || after == nil {
		t.Fatalf("deployment %s was not created: %v", dependent, err)
	}
	conds, _, _ := unstructured.NestedSlice(web.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] != "Available" || m["status"] != "True" {
			continue
		}
		availableAt, err := time.Parse(time.RFC3339, m["lastTransitionTime"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if created := after.GetCreationTimestamp().Time; created.Before(availableAt) {
			t.Fatalf("%s was created at %s, before %s became available at %s", dependent, created, first, availableAt)
		}
		return
	}
	t.Fatalf("deployment %s has no Available=True condition", first)
}
