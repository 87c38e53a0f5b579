package waiting

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// obj parses YAML the way the API server's JSON arrives: integers as int64.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

func expect(t *testing.T, got State, met bool, summary string) {
	t.Helper()
	if got.Met != met || got.Summary != summary {
		t.Errorf("got {Met:%v Summary:%q}, want {Met:%v Summary:%q}", got.Met, got.Summary, met, summary)
	}
}

const service = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns}
status:
  loadBalancer:
    ingress:
    - {ip: 10.0.0.1}
    - {hostname: lb.example.com, ports: [{port: 80}]}
`

func TestFieldWaitNeedsAValueNotJustAParent(t *testing.T) {
	spec := Spec{Field: objectpath.MustParse("status.loadBalancer.ingress[0].hostname")}
	expect(t, spec.Evaluate(nil), false, "does not exist yet")
	expect(t, spec.Evaluate(obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web}, status: {loadBalancer: {}}}`)),
		false, "status.loadBalancer.ingress[0].hostname is not set")
	spec = Spec{Field: objectpath.MustParse("status.loadBalancer")}
	expect(t, spec.Evaluate(obj(t, `{apiVersion: v1, kind: Service, metadata: {name: web}, status: {loadBalancer: {}}}`)),
		false, "status.loadBalancer is empty")
	spec = Spec{Field: objectpath.MustParse("status.loadBalancer.ingress[1].hostname")}
	expect(t, spec.Evaluate(obj(t, service)), true, "status.loadBalancer.ingress[1].hostname = lb.example.com")
}

func TestFieldValueComparesRenderedValues(t *testing.T) {
	fvs, err := NewFieldValues(map[string]string{"status.phase": "Bound", "status.capacity.count": "3"})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{FieldValues: fvs}
	pvc := `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}, status: {phase: %s, capacity: {count: 3}}}`
	expect(t, spec.Evaluate(obj(t, strings.Replace(pvc, "%s", "Pending", 1))), false, `status.phase is "Pending", want "Bound"`)
	expect(t, spec.Evaluate(obj(t, strings.Replace(pvc, "%s", "Bound", 1))), true, `status.capacity.count = "3", status.phase = "Bound"`)
	expect(t, spec.Evaluate(obj(t, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}}`)),
		false, `status.capacity.count is not set, want "3"`)
	if _, err := NewFieldValues(map[string]string{"status..phase": "x"}); err == nil {
		t.Error("a bad path was accepted")
	}
}

func TestConditionWait(t *testing.T) {
	job := func(conds string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: batch/v1, kind: Job, metadata: {name: migrate, generation: 1}, status: {conditions: `+conds+`}}`)
	}
	spec := Spec{Condition: "Complete"}
	expect(t, spec.Evaluate(job(`[]`)), false, "condition Complete is not reported yet")
	expect(t, spec.Evaluate(job(`[{type: Complete, status: "True"}]`)), true, "condition Complete=True")
	// kubectl wait matches condition types regardless of case.
	expect(t, Spec{Condition: "complete"}.Evaluate(job(`[{type: Complete, status: "True"}]`)), true, "condition Complete=True")

	st := spec.Evaluate(job(`[{type: Failed, status: "True", reason: BackoffLimitExceeded, message: "Job has reached the specified backoff limit"}]`))
	if !st.Stuck || !strings.Contains(st.Summary, "BackoffLimitExceeded") {
		t.Errorf("a failed Job should end a wait for Complete at once, got %+v", st)
	}

	dep := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, generation: 3}, status: {conditions: [
	  {type: Available, status: "True", observedGeneration: 2},
	  {type: Progressing, status: "False", reason: NewReplicaSetCreated, message: "Created new\n replica set"}]}}`)
	expect(t, Spec{Condition: "Available"}.Evaluate(dep), false,
		"condition Available is True for generation 2; the object is at generation 3")
	expect(t, Spec{Condition: "Progressing"}.Evaluate(dep), false,
		"condition Progressing=False NewReplicaSetCreated: Created new replica set")
}

func deployment(t *testing.T, generation, observed, desired, replicas, updated, ready, available int) *unstructured.Unstructured {
	t.Helper()
	u := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}`)
	u.SetGeneration(int64(generation))
	_ = unstructured.SetNestedField(u.Object, int64(desired), "spec", "replicas")
	st := map[string]any{
		"observedGeneration": int64(observed), "replicas": int64(replicas), "updatedReplicas": int64(updated),
		"readyReplicas": int64(ready), "availableReplicas": int64(available),
	}
	_ = unstructured.SetNestedMap(u.Object, st, "status")
	return u
}

func TestDeploymentRolloutLikeKubectl(t *testing.T) {
	spec := Spec{Rollout: true}
	expect(t, spec.Evaluate(deployment(t, 2, 1, 3, 3, 3, 3, 3)), false,
		"waiting for the controller to observe generation 2 (it has seen 1)")
	expect(t, spec.Evaluate(deployment(t, 2, 2, 3, 4, 1, 3, 3)), false,
		"1/3 replicas updated, 3/3 replicas ready, 3 old replicas pending termination")
	expect(t, spec.Evaluate(deployment(t, 2, 2, 3, 4, 3, 3, 3)), false,
		"3/3 replicas ready, 1 old replica pending termination")
	expect(t, spec.Evaluate(deployment(t, 2, 2, 3, 3, 3, 2, 2)), false, "2/3 replicas ready")
	expect(t, spec.Evaluate(deployment(t, 2, 2, 3, 3, 3, 3, 1)), false, "3/3 replicas ready, 1/3 available")
	expect(t, spec.Evaluate(deployment(t, 2, 2, 3, 3, 3, 3, 3)), true, "3/3 replicas ready")
	expect(t, spec.Evaluate(deployment(t, 1, 1, 0, 0, 0, 0, 0)), true, "0/0 replicas ready")

	// spec.replicas left out means 1.
	d := deployment(t, 1, 1, 1, 1, 1, 1, 1)
	unstructured.RemoveNestedField(d.Object, "spec", "replicas")
	expect(t, spec.Evaluate(d), true, "1/1 replicas ready")

	stuck := deployment(t, 2, 2, 3, 3, 3, 1, 1)
	_ = unstructured.SetNestedSlice(stuck.Object, []any{map[string]any{
		"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}}, "status", "conditions")
	if st := spec.Evaluate(stuck); !st.Stuck {
		t.Errorf("a Deployment past its progress deadline should stop the wait: %+v", st)
	}
}

func TestStatefulSetRollout(t *testing.T) {
	spec := Spec{Rollout: true}
	sts := func(extraSpec, status string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, generation: 2},
		  spec: {replicas: 3`+extraSpec+`}, status: {observedGeneration: 2`+status+`}}`)
	}
	expect(t, spec.Evaluate(sts("", ", readyReplicas: 2, currentRevision: a, updateRevision: a")), false, "2/3 replicas ready")
	expect(t, spec.Evaluate(sts("", ", readyReplicas: 3, updatedReplicas: 1, currentRevision: a, updateRevision: b")), false,
		"1/3 replicas updated to revision b, 3/3 replicas ready")
	expect(t, spec.Evaluate(sts("", ", readyReplicas: 3, updatedReplicas: 3, currentRevision: b, updateRevision: b")), true,
		"3/3 replicas ready")
	expect(t, spec.Evaluate(sts(", updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}",
		", readyReplicas: 3, updatedReplicas: 1, currentRevision: a, updateRevision: b")), true,
		"3/3 replicas ready, partitioned rollout of 1 replicas done")
	expect(t, spec.Evaluate(sts(", updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 1}}",
		", readyReplicas: 3, updatedReplicas: 1, currentRevision: a, updateRevision: b")), false,
		"1/2 replicas updated (partition 1), 3/3 replicas ready")
	expect(t, spec.Evaluate(sts(", updateStrategy: {type: OnDelete}",
		", readyReplicas: 3, currentRevision: a, updateRevision: b")), true, "3/3 replicas ready")
}

func TestDaemonSetRollout(t *testing.T) {
	spec := Spec{Rollout: true}
	ds := func(strategy, status string) *unstructured.Unstructured {
		return obj(t, `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: agent, generation: 1},
		  spec: {updateStrategy: {type: `+strategy+`}}, status: {observedGeneration: 1, desiredNumberScheduled: 2, `+status+`}}`)
	}
	expect(t, spec.Evaluate(ds("RollingUpdate", "updatedNumberScheduled: 1, numberReady: 2, numberAvailable: 2")), false,
		"1/2 pods updated, 2/2 pods ready")
	expect(t, spec.Evaluate(ds("RollingUpdate", "updatedNumberScheduled: 2, numberReady: 2, numberAvailable: 1")), false,
		"2/2 pods ready, 1/2 available")
	expect(t, spec.Evaluate(ds("RollingUpdate", "updatedNumberScheduled: 2, numberReady: 2, numberAvailable: 2")), true,
		"2/2 pods ready")
	expect(t, spec.Evaluate(ds("OnDelete", "updatedNumberScheduled: 0, numberReady: 2, numberAvailable: 2")), true,
		"2/2 pods ready")
}

func TestRolloutOnlyForWorkloads(t *testing.T) {
	cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`)
	if st := (Spec{Rollout: true}).Evaluate(cm); st.Met || !st.Stuck {
		t.Errorf("ConfigMap rollout: %+v", st)
	}
	crd := obj(t, `{apiVersion: example.com/v1, kind: Deployment, metadata: {name: c}}`)
	if HasRollout(crd.GroupVersionKind()) {
		t.Error("a custom kind named Deployment has no rollout we can judge")
	}
}

func TestStatusValueKeepsOnlyTheWaitedField(t *testing.T) {
	svc := obj(t, service).Object
	for path, want := range map[string]any{
		"status.loadBalancer.ingress[1].hostname": map[string]any{"loadBalancer": map[string]any{
			"ingress": []any{nil, map[string]any{"hostname": "lb.example.com"}}}},
		"status.loadBalancer.ingress[0]": map[string]any{"loadBalancer": map[string]any{
			"ingress": []any{map[string]any{"ip": "10.0.0.1"}}}},
		"metadata.name": map[string]any{"metadata": map[string]any{"name": "web"}},
	} {
		got, ok := StatusValue(svc, objectpath.MustParse(path))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("StatusValue(%s) = %#v, %v; want %#v", path, got, ok, want)
		}
	}

	pod := obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {containerStatuses: [
	  {name: side, image: a, ready: true}, {name: app, image: b, ready: false, restartCount: 2}]}}`).Object
	got, ok := StatusValue(pod, objectpath.MustParse("status.containerStatuses[name=app].restartCount"))
	want := map[string]any{"containerStatuses": []any{map[string]any{"name": "app", "restartCount": int64(2)}}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("by key: got %#v, want %#v", got, want)
	}

	for _, missing := range []string{"status.loadBalancer.ingress[2].ip", "status.loadBalancer.ingress[0].hostname", "spec.type"} {
		if v, ok := StatusValue(svc, objectpath.MustParse(missing)); ok {
			t.Errorf("StatusValue(%s) = %#v, want not found", missing, v)
		}
	}
	// The result is a copy: later changes to the object do not leak into state.
	got, _ = StatusValue(svc, objectpath.MustParse("status.loadBalancer.ingress[0]"))
	got.(map[string]any)["loadBalancer"].(map[string]any)["ingress"].([]any)[0].(map[string]any)["ip"] = "changed"
	if ip, _ := objectpath.MustParse("status.loadBalancer.ingress[0].ip").Get(svc); ip != "10.0.0.1" {
		t.Errorf("StatusValue shares memory with the object: ip is now %v", ip)
	}
}
