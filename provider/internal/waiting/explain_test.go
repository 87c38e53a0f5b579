package waiting

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

func TestExplainRolloutShowsCountsConditionsAndStuckPods(t *testing.T) {
	dep := deployment(t, 2, 2, 3, 3, 3, 1, 1)
	_ = unstructured.SetNestedSlice(dep.Object, []any{
		map[string]any{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."},
	}, "status", "conditions")
	pods := []unstructured.Unstructured{
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-b}, status: {phase: Pending, conditions: [
		  {type: PodScheduled, status: "False", reason: Unschedulable, message: "0/1 nodes are available: 1 Insufficient cpu."}]}}`),
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-a}, status: {phase: Running, conditions: [{type: Ready, status: "True"}]}}`),
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-c}, status: {phase: Running,
		  conditions: [{type: Ready, status: "False", reason: ContainersNotReady, message: "containers with unready status: [app]"}],
		  containerStatuses: [{name: app, ready: false, restartCount: 4, state: {waiting: {reason: CrashLoopBackOff, message: "back-off 40s"}}}]}}`),
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: web-d}, status: {phase: Pending}}`),
	}
	spec := Spec{Rollout: true}
	got := Explain(spec, Result{Object: dep, State: spec.Evaluate(dep)}, pods)
	want := `Now: 1/3 replicas ready.
Replicas: 3 desired, 3 current, 3 updated, 1 ready, 1 available (observed generation 2 of 2).
Conditions:
  Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability.
Pods not ready (3 of 4):
  web-b: Pending; PodScheduled=False Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.
  web-c: Running; Ready=False ContainersNotReady: containers with unready status: [app]; container app waiting: CrashLoopBackOff: back-off 40s
  web-d: Pending; not scheduled yet
`
	if got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
}

func TestExplainFieldWaitShowsCurrentValues(t *testing.T) {
	fvs, _ := NewFieldValues(map[string]string{"status.phase": "Bound"})
	spec := Spec{FieldValues: fvs}
	pvc := obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}, status: {phase: Pending}}`)
	got := Explain(spec, Result{Object: pvc, State: spec.Evaluate(pvc)}, nil)
	want := "Now: status.phase is \"Pending\", want \"Bound\".\nCurrent value:\n  status.phase = Pending\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}

	spec = Spec{Field: objectpath.MustParse("status.loadBalancer.ingress[0].hostname")}
	svc := obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web}}`)
	got = Explain(spec, Result{Object: svc, State: spec.Evaluate(svc)}, nil)
	if !strings.Contains(got, "status.loadBalancer.ingress[0].hostname: not set") {
		t.Errorf("got %q", got)
	}

	got = Explain(spec, Result{State: spec.Evaluate(nil)}, nil)
	if got != "Now: does not exist yet.\n" {
		t.Errorf("missing object: got %q", got)
	}
}

func TestExplainJobShowsPodCountsAndNoConditionsYet(t *testing.T) {
	job := obj(t, `{apiVersion: batch/v1, kind: Job, metadata: {name: migrate}, status: {active: 1}}`)
	spec := Spec{Condition: "Complete"}
	got := Explain(spec, Result{Object: job, State: spec.Evaluate(job)}, []unstructured.Unstructured{
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: migrate-x}, status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}]}}`),
		*obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: migrate-old}, status: {phase: Succeeded}}`),
	})
	want := `Now: condition Complete is not reported yet.
Pods: 1 active, 0 ready, 0 succeeded, 0 failed.
Conditions: none reported.
Pods not ready (1 of 2):
  migrate-x: Pending
`
	if got != want {
		t.Errorf("Explain:\n%s\nwant:\n%s", got, want)
	}
}

func TestExplainListsAtMostTenPods(t *testing.T) {
	var pods []unstructured.Unstructured
	for _, n := range "abcdefghijkl" {
		pods = append(pods, *obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: p-`+string(n)+`}, status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}]}}`))
	}
	got := podLines(pods)
	if !strings.Contains(got, "Pods not ready (12 of 12)") || !strings.Contains(got, "... and 2 more") || strings.Contains(got, "p-k") {
		t.Errorf("got:\n%s", got)
	}
}

func TestPodProblemOnAScheduledPodThatNeverStarts(t *testing.T) {
	pod := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {nodeName: node-1},
	  status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}]}}`)
	got, stuck := PodProblem(pod)
	if !stuck || got != "Pending; scheduled to node-1, no container started yet" {
		t.Errorf("got %q, %v", got, stuck)
	}
}
