package waiting

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// readyState judges any kind by the Kubernetes community's status conventions
// (kstatus, sigs.k8s.io/cli-utils), the same rules kpt, Flux, Config Sync and
// Helm 4's --wait use: built-in kinds by their own status (a Deployment's
// available replicas, a Job's completion, a PVC's Bound phase, a LoadBalancer
// Service's ingress), everything else by observedGeneration and the Ready /
// Reconciling / Stalled conditions. For rollout kinds the summary is the
// rollout's own progress line, which says more than kstatus's message.
//
// One rule serves k8sconnect_wait's ready, the Helm release's wait and the
// manifest set's (docs/guides/waiting.md#how-ready-is-judged): a custom
// resource with no status at all is ready, Current as kstatus calls it.
// Nothing tells a kind no controller reports on from one whose controller
// has not looked yet: a CRD's status subresource does not (prometheus-
// operator's ServiceMonitor declares one its operator fills only behind a
// feature gate), so waiting for a report could hold an apply until its
// timeout for a status that never comes. The summary says so, and
// condition = "Ready" waits for the controller's own verdict.
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
		if ReadyWithoutStatus(obj) {
			return State{Met: true, Summary: "ready: it has no status, which kstatus counts as Current (no controller " +
				"has reported on it; to wait for its controller's verdict, wait for condition = \"Ready\")"}
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

// customResource reports a kind the API server does not serve by itself (one
// from a CRD or an aggregated API), by the table of built-in kinds: a group
// name is no guide, since CRDs such as the Gateway API's live in *.k8s.io.
func customResource(obj *unstructured.Unstructured) bool {
	_, builtin := yamldocs.BuiltinNamespaced(obj.GroupVersionKind().GroupKind())
	return !builtin
}

// ReadyWithoutStatus tells whether obj is a custom resource that nothing
// has written a status for, which the ready rule counts as ready.
func ReadyWithoutStatus(obj *unstructured.Unstructured) bool {
	return customResource(obj) && !reported(obj)
}

// reported tells whether anything has written status for obj: a status
// that is not empty.
func reported(obj *unstructured.Unstructured) bool {
	st, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status")
	return st != nil && !IsEmpty(st)
}
