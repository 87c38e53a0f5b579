package waiting

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// readyState judges any kind by the Kubernetes community's status conventions
// (kstatus, sigs.k8s.io/cli-utils), the same rules kpt, Flux and Config Sync
// use: built-in kinds by their own status (a Deployment's available replicas,
// a Job's completion, a PVC's Bound phase, a LoadBalancer Service's ingress),
// everything else by observedGeneration and the Ready / Reconciling / Stalled
// conditions. For rollout kinds the summary is the rollout's own progress
// line, which says more than kstatus's message.
//
// kstatus calls a custom resource with no status at all Current. That is right
// for a kind no controller reports on, and a guess for one whose controller
// has not looked at the object yet (just created, or its operator still
// starting): "ready" then would end the wait before anything happened. So a
// custom resource without status is ready only when noStatusIsReady says no
// report is coming; any status its controller writes is then judged by
// kstatus as it stands.
func readyState(obj *unstructured.Unstructured, noStatusIsReady bool) State {
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
			if noStatusIsReady {
				return State{Met: true, Summary: "ready: no status, and none is expected (Current, as kstatus judges it)"}
			}
			return State{Summary: "not ready: its controller has not reported a status yet (the object has no status, " +
				"and its CustomResourceDefinition declares a status subresource, so a controller is expected to " +
				"write one). Check that the controller (operator) of this kind is installed and running; to wait " +
				"for something else, use condition, field or field_value instead"}
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

// reported tells whether anything has written status for obj: a status
// that is not empty.
func reported(obj *unstructured.Unstructured) bool {
	st, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status")
	return st != nil && !IsEmpty(st)
}
