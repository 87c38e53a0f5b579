package waiting

import (
	"strings"
	"testing"
)

// ready = true judges each kind by its own status, and custom resources by
// the Ready/Stalled conventions; a failure that cannot heal ends the wait.
func TestReadyJudgesEachKindByItsConventions(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml       string
		met, stuck bool
		says       string
	}{
		"deployment rolled out": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2}
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, true, false, "2/2 replicas ready"},
		"deployment rolling": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, false, false, "1/3 replicas ready"},
		"job complete": {`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {succeeded: 1, conditions: [{type: Complete, status: "True"}]}`, true, false, "ready"},
		"job failed": {`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {failed: 1, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}`, false, true, "failed"},
		"pvc bound": {`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Bound}`, true, false, "ready"},
		"pvc pending": {`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Pending}`, false, false, "not ready"},
		"load balancer without address": {`apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {}}`, false, false, "not ready"},
		"load balancer with address": {`apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {ingress: [{ip: 203.0.113.7}]}}`, true, false, "ready"},
		"custom resource ready": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 3}
status: {observedGeneration: 3, conditions: [{type: Ready, status: "True", reason: Provisioned}]}`, true, false, "ready"},
		"custom resource behind its generation": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 4}
status: {observedGeneration: 3, conditions: [{type: Ready, status: "True"}]}`, false, false, "not ready"},
		"custom resource its controller has not seen": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
spec: {size: 1}`, true, false, "no controller has reported"},
		// A CRD in a *.k8s.io group is still a custom resource.
		"gateway api kind its controller has not seen": {`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, generation: 1}
spec: {gatewayClassName: example}`, true, false, "kstatus counts as Current"},
		"custom resource with an empty status": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {}`, true, false, "it has no status"},
		// A status of its own making, without conditions or observedGeneration:
		// reported, and Current as kstatus judges it.
		"custom resource with a phase only": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {phase: Running}`, true, false, "ready"},
		// Once a controller reports, its status is judged as it stands.
		"custom resource behind its generation, no conditions": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 2}
status: {observedGeneration: 1}`, false, false, "not ready"},
		"custom resource stalled": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {observedGeneration: 1, conditions: [{type: Stalled, status: "True", reason: QuotaExceeded, message: "no quota left"}]}`, false, true, "no quota left"},
	} {
		t.Run(name, func(t *testing.T) {
			st := Spec{Ready: true}.Evaluate(obj(t, tc.yaml))
			if st.Met != tc.met || st.Stuck != tc.stuck || !strings.Contains(st.Summary, tc.says) {
				t.Errorf("met %v stuck %v %q; want met %v stuck %v and %q", st.Met, st.Stuck, st.Summary, tc.met, tc.stuck, tc.says)
			}
		})
	}
}
