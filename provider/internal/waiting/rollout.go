package waiting

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// rolloutKinds are the kinds with a rollout, as `kubectl rollout status` knows them.
var rolloutKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// HasRollout reports whether rollout waits make sense for a kind. A CRD that
// happens to call its kind Deployment has no rollout we could judge, so the
// group must be apps as well.
func HasRollout(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "apps" && rolloutKinds[gvk.Kind]
}

// RolloutKinds lists the kinds HasRollout accepts, for messages.
func RolloutKinds() string { return "Deployment, StatefulSet and DaemonSet (apps/v1)" }

// rolloutState follows `kubectl rollout status`: the controller has seen the
// latest spec, every replica runs it, and they are ready and available.
func rolloutState(obj *unstructured.Unstructured) State {
	gvk := obj.GroupVersionKind()
	if !HasRollout(gvk) {
		return State{Stuck: true, Summary: fmt.Sprintf("%s has no rollout; only %s do", gvk.Kind, RolloutKinds())}
	}
	if gen, seen := obj.GetGeneration(), num(obj, "status", "observedGeneration"); seen < gen {
		return State{Summary: fmt.Sprintf("waiting for the controller to observe generation %d (it has seen %d)", gen, seen)}
	}
	switch gvk.Kind {
	case "Deployment":
		return deploymentRollout(obj)
	case "StatefulSet":
		return statefulSetRollout(obj)
	default:
		return daemonSetRollout(obj)
	}
}

func deploymentRollout(obj *unstructured.Unstructured) State {
	desired := desiredReplicas(obj)
	replicas := num(obj, "status", "replicas")
	updated := num(obj, "status", "updatedReplicas")
	ready := num(obj, "status", "readyReplicas")
	available := num(obj, "status", "availableReplicas")

	for _, c := range Conditions(obj) {
		if c.Type == "Progressing" && c.Reason == "ProgressDeadlineExceeded" {
			return State{Stuck: true, Summary: fmt.Sprintf("%d/%d replicas ready; the rollout exceeded its progress deadline", ready, desired)}
		}
	}
	var parts []string
	if updated < desired {
		parts = append(parts, fmt.Sprintf("%d/%d replicas updated", updated, desired))
	}
	parts = append(parts, fmt.Sprintf("%d/%d replicas ready", ready, desired))
	if old := replicas - updated; old > 0 {
		parts = append(parts, fmt.Sprintf("%d old %s pending termination", old, plural(old, "replica", "replicas")))
	}
	if available < desired && ready >= desired {
		parts = append(parts, fmt.Sprintf("%d/%d available", available, desired))
	}
	met := updated >= desired && replicas <= updated && ready >= desired && available >= desired
	return State{Met: met, Summary: strings.Join(parts, ", ")}
}

func statefulSetRollout(obj *unstructured.Unstructured) State {
	desired := desiredReplicas(obj)
	ready := num(obj, "status", "readyReplicas")
	updated := num(obj, "status", "updatedReplicas")
	summary := fmt.Sprintf("%d/%d replicas ready", ready, desired)
	if ready < desired {
		return State{Summary: summary}
	}
	strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "updateStrategy", "type")
	if strategy == "OnDelete" {
		// Pods are only replaced when someone deletes them: there is no revision
		// to converge on, so readiness is all a rollout can mean.
		return State{Met: true, Summary: summary}
	}
	if partition := num(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); partition > 0 {
		want := desired - partition
		if want < 0 {
			want = 0
		}
		if updated < want {
			return State{Summary: fmt.Sprintf("%d/%d replicas updated (partition %d), %s", updated, want, partition, summary)}
		}
		return State{Met: true, Summary: fmt.Sprintf("%s, partitioned rollout of %d replicas done", summary, want)}
	}
	current, _, _ := unstructured.NestedString(obj.Object, "status", "currentRevision")
	update, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
	if current != update {
		return State{Summary: fmt.Sprintf("%d/%d replicas updated to revision %s, %s", updated, desired, update, summary)}
	}
	return State{Met: true, Summary: summary}
}

func daemonSetRollout(obj *unstructured.Unstructured) State {
	desired := num(obj, "status", "desiredNumberScheduled")
	updated := num(obj, "status", "updatedNumberScheduled")
	available := num(obj, "status", "numberAvailable")
	ready := num(obj, "status", "numberReady")
	strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "updateStrategy", "type")
	var parts []string
	if strategy != "OnDelete" && updated < desired {
		parts = append(parts, fmt.Sprintf("%d/%d pods updated", updated, desired))
	}
	parts = append(parts, fmt.Sprintf("%d/%d pods ready", ready, desired))
	if available < desired && ready >= desired {
		parts = append(parts, fmt.Sprintf("%d/%d available", available, desired))
	}
	met := available >= desired && (strategy == "OnDelete" || updated >= desired)
	return State{Met: met, Summary: strings.Join(parts, ", ")}
}

// desiredReplicas is spec.replicas, which the API defaults to 1.
func desiredReplicas(obj *unstructured.Unstructured) int64 {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
	if n, ok := toInt64(v); found && ok {
		return n
	}
	return 1
}

func num(obj *unstructured.Unstructured, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	n, _ := toInt64(v)
	return n
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
