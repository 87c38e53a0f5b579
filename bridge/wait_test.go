package bridge_test

// k8sconnect_wait under Pulumi (ADR 0007): the scenarios of
// provider/wait/resource_wait_test.go as Pulumi programs, one language each,
// asserting what their Terraform versions assert. Run with:
// go test ./bridge -run TestPulumiWait -v

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var (
	waitJobs       = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	waitPods       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	waitConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	waitServices   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

const (
	waitType   = "k8sconnect:index/wait:Wait"
	objectType = "k8sconnect:index/kubernetesObject:KubernetesObject"
)

// holdPods is the podAnnotations config that keeps a scenario's pods Pending
// until the test releases them.
func holdPods() pulumitest.Value {
	b, _ := json.Marshal(map[string]string{localcluster.HoldAnnotation: "true"})
	return pulumitest.Plain(string(b))
}

// Scenario 1 (TypeScript): a Deployment's rollout gates a second Deployment,
// which is created only once the first has all its replicas available.
func TestPulumiWait_rolloutGatesDependent(t *testing.T) {
	skipShort(t)
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
	if err := acctest.CreatedAfterAvailable(t, ns, "web", 3, "after"); err != nil {
		t.Fatal(err)
	}

	// A finished rollout is not judged again: nothing to do.
	res = stack.Run(pulumitest.Preview, nil)
	expectChanges(t, res, map[string]int{"same": 4})
}

// Scenario 2 (Python): a Wait that times out fails `pulumi up` and keeps its
// dependent from being created, but leaves the Job alone, in the stack and in
// the cluster; the next up waits on the very same Job and succeeds.
func TestPulumiWait_timeoutLeavesObjectAndRetriesInPlace(t *testing.T) {
	skipShort(t)
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

	acctest.ReleaseJob(t, ns, "migrate")
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
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	stack := pulumitest.NewScenario(t, pulumitest.Go, "wait-field")
	// Plays the cloud controller: once the Service exists, and the Wait is
	// surely watching, it gets a hostname.
	acctest.Later(t, waitServices, ns, "lb", 5*time.Minute, func(*unstructured.Unstructured) error {
		return acctest.SetLoadBalancerHostname(t, ns, "lb", "lb-1.example.com")
	})

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
	if err := acctest.ConfigMapHas(t, ns, "consumer", "hostname", "lb-1.example.com"); err != nil {
		t.Fatal(err)
	}
	consumerUID := acctest.UID(t, waitConfigMaps, ns, "consumer")

	if err := acctest.SetLoadBalancerHostname(t, ns, "lb", "lb-2.example.com"); err != nil {
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
	if err := acctest.ConfigMapHas(t, ns, "consumer", "hostname", "lb-1.example.com"); err != nil {
		t.Fatal(err)
	}

	res = stack.Run(pulumitest.Up, nil, pulumitest.RefreshFirst)
	expectChanges(t, res, map[string]int{"same": 3, "update": 1})
	if got := res.Outputs["hostname"]; got != "lb-2.example.com" {
		t.Errorf("output hostname = %v, want lb-2.example.com", got)
	}
	if err := acctest.ConfigMapHas(t, ns, "consumer", "hostname", "lb-2.example.com"); err != nil {
		t.Fatal(err)
	}
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
					_, _ = ri.Patch(context.Background(), p.GetName(), ktypes.MergePatchType, unhold, metav1.PatchOptions{FieldManager: "test-kubelet"})
				}
			}
		}
	}()
}

// ready: true under Pulumi (a YAML program): a Deployment whose pods start
// late gates a second one, which is created only after the first is ready,
// and a second preview is empty.
func TestPulumiWait_readyGatesDependent(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	waitReleasePodsAfter(t, ns, "app=web", 3*time.Second)
	deployment := func(name string, replicas int, held bool) string {
		annotations := ""
		if held {
			annotations = fmt.Sprintf(", annotations: {%q: \"true\"}", localcluster.HoldAnnotation)
		}
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %[1]s, namespace: %[2]s}\n"+
			"spec:\n  replicas: %[3]d\n  selector: {matchLabels: {app: %[1]s}}\n  template:\n"+
			"    metadata: {labels: {app: %[1]s}%[4]s}\n    spec: {containers: [{name: app, image: nginx}]}\n",
			name, ns, replicas, annotations)
	}
	opts := map[string]any{"provider": "${k8s}"}
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-wait-ready", "runtime": "yaml",
		"resources": map[string]any{
			"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
				"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
			"web": map[string]any{"type": objectType, "options": opts, "properties": map[string]any{"yamlBody": deployment("web", 2, true)}},
			"webReady": map[string]any{"type": waitType, "options": opts, "properties": map[string]any{
				"resourceRef": "${web.resourceRef}", "waitFor": map[string]any{"ready": true, "timeout": "3m"}}},
			"after": map[string]any{"type": objectType,
				"options":    map[string]any{"provider": "${k8s}", "dependsOn": []string{"${webReady}"}},
				"properties": map[string]any{"yamlBody": deployment("after", 1, false)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	s.Run(pulumitest.Up, nil)
	if err := acctest.CreatedAfterAvailable(t, ns, "web", 2, "after"); err != nil {
		t.Fatal(err)
	}
	if r := s.Run(pulumitest.Preview, nil); r.Changes["update"]+r.Changes["create"]+r.Changes["replace"] != 0 {
		t.Errorf("preview after the wait is not empty: %v", r.Changes)
	}
}

// While a Wait waits, `pulumi up` shows where things stand in its status
// display, as a Terraform user reads it in the provider log, with no TF_LOG
// set: the pod starts only after waiting.DefaultProgressInterval (10s), so
// at least one progress line is due.
func TestPulumiWait_progressInStatusDisplay(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-wait-progress", "runtime": "yaml",
		"resources": map[string]any{
			"web": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
				"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath, "context": localcluster.TokenContext},
				"yamlBody": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {%s: "true"}}
    spec: {containers: [{name: app, image: nginx:1.27}]}
`, ns, localcluster.HoldAnnotation),
			}},
			"rollout": map[string]any{"type": "k8sconnect:Wait", "properties": map[string]any{
				"resourceRef": "${web.resourceRef}",
				"waitFor":     map[string]any{"rollout": true, "timeout": "2m"},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stack := pulumitest.NewYAMLProgram(t, string(program))
	waitReleasePodsAfter(t, ns, "app=web", 13*time.Second)
	res := stack.Run(pulumitest.Up, nil)
	expectChanges(t, res, map[string]int{"create": 3})
	if !regexp.MustCompile(`web: 0/1 replicas ready \(\d+(\.\d)?s elapsed\)`).MatchString(res.Log) {
		t.Fatalf("pulumi up shows no progress line of the wait:\n%s", res.Log)
	}
}
