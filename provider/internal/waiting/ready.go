package waiting

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// readyState judges any kind by the Kubernetes community's status conventions
// (kstatus, sigs.k8s.io/cli-utils), the same rules kpt, Flux and Config Sync
// use: built-in kinds by their own status (a Deployment's available replicas,
// a Job's completion, a PVC's Bound phase, a LoadBalancer Service's ingress),
// everything else by observedGeneration and the Ready / Reconciling / Stalled
// conditions. For rollout kinds the summary is the rollout's own progress
// line, which says more than kstatus's message.
func readyState(obj *unstructured.Unstructured) State {
	if st, ok := loadBalancerState(obj); ok {
		return st
	}
	res, err := kstatus.Compute(obj)
	if err != nil {
		return State{Summary: "cannot judge readiness: " + err.Error()}
	}
	summary := res.Message
	if HasRollout(obj.GroupVersionKind()) {
		if r := rolloutState(obj); r.Summary != "" {
			summary = r.Summary
		}
	}
	if summary == "" {
		summary = string(res.Status)
	}
	switch res.Status {
	case kstatus.CurrentStatus:
		if customResource(obj) && !reported(obj) {
			// kstatus calls a resource without conditions Current; a custom
			// resource just created has none only because its controller has
			// not looked at it yet, and "ready" then would be a guess.
			return State{Summary: "not ready: its controller has not reported a status yet (no Ready condition and " +
				"no status.observedGeneration); a kind that no controller reconciles is never ready, so wait for a field instead"}
		}
		return State{Met: true, Summary: "ready: " + summary}
	case kstatus.FailedStatus:
		// Failed is final for the kinds kstatus reads it from (a failed Job,
		// a Deployment past its progress deadline, a Stalled resource).
		return State{Stuck: true, Summary: "failed: " + summary}
	case kstatus.TerminatingStatus:
		return State{Summary: "being deleted: " + summary}
	default:
		return State{Summary: "not ready: " + summary}
	}
}

// loadBalancerState judges a LoadBalancer Service by its address, as Helm's
// --wait does: kstatus calls it ready as soon as it has a cluster IP, but what
// users wait for is the address clients will reach.
func loadBalancerState(obj *unstructured.Unstructured) (State, bool) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "" || gvk.Kind != "Service" {
		return State{}, false
	}
	if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != "LoadBalancer" {
		return State{}, false
	}
	ingress, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	if len(ingress) == 0 {
		return State{Summary: "not ready: the load balancer has no address yet (status.loadBalancer.ingress is empty)"}, true
	}
	return State{Met: true, Summary: "ready: the load balancer has an address"}, true
}

// customResource reports a kind from a CRD: its group has a dot and is not one
// of Kubernetes' own (*.k8s.io, reserved for the project's APIs).
func customResource(obj *unstructured.Unstructured) bool {
	g := obj.GroupVersionKind().Group
	return strings.Contains(g, ".") && !strings.HasSuffix(g, ".k8s.io") && g != "k8s.io"
}

// reported tells whether a controller has written status for obj: a Ready
// condition, or the generation it observed.
func reported(obj *unstructured.Unstructured) bool {
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "observedGeneration"); ok {
		return true
	}
	for _, c := range Conditions(obj) {
		if c.Type == "Ready" {
			return true
		}
	}
	return false
}
