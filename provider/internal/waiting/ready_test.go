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
		noStatus   bool // Spec.NoStatusIsReady
	}{
		"deployment rolled out": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2}
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`, true, false, "2/2 replicas ready", false},
		"deployment rolling": {`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 3}
status: {observedGeneration: 2, replicas: 3, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 1}`, false, false, "1/3 replicas ready", false},
		"job complete": {`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {succeeded: 1, conditions: [{type: Complete, status: "True"}]}`, true, false, "ready", false},
		"job failed": {`apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
status: {failed: 1, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded}]}`, false, true, "failed", false},
		"pvc bound": {`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Bound}`, true, false, "ready", false},
		"pvc pending": {`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
status: {phase: Pending}`, false, false, "not ready", false},
		"load balancer without address": {`apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {}}`, false, false, "not ready", false},
		"load balancer with address": {`apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.1}
status: {loadBalancer: {ingress: [{ip: 203.0.113.7}]}}`, true, false, "ready", false},
		"custom resource ready": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 3}
status: {observedGeneration: 3, conditions: [{type: Ready, status: "True", reason: Provisioned}]}`, true, false, "ready", false},
		"custom resource behind its generation": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 4}
status: {observedGeneration: 3, conditions: [{type: Ready, status: "True"}]}`, false, false, "not ready", false},
		"custom resource its controller has not seen": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
spec: {size: 1}`, false, false, "has not reported a status yet", false},
		// A CRD in a *.k8s.io group is still a custom resource.
		"gateway api kind its controller has not seen": {`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, generation: 1}
spec: {gatewayClassName: example}`, false, false, "has not reported a status yet", false},
		"custom resource of a kind nothing reports on": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
spec: {size: 1}`, true, false, "none is expected", true},
		"custom resource with an empty status": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {}`, false, false, "has not reported a status yet", false},
		// A status of its own making, without conditions or observedGeneration:
		// reported, and Current as kstatus judges it.
		"custom resource with a phase only": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {phase: Running}`, true, false, "ready", false},
		// No status expected, but one came with a condition: judged as it stands.
		"custom resource reporting though none was expected": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 2}
status: {observedGeneration: 1}`, false, false, "not ready", true},
		"custom resource stalled": {`apiVersion: example.com/v1
kind: Database
metadata: {name: orders, generation: 1}
status: {observedGeneration: 1, conditions: [{type: Stalled, status: "True", reason: QuotaExceeded, message: "no quota left"}]}`, false, true, "no quota left", false},
	} {
		t.Run(name, func(t *testing.T) {
			st := Spec{Ready: true, NoStatusIsReady: tc.noStatus}.Evaluate(obj(t, tc.yaml))
			if st.Met != tc.met || st.Stuck != tc.stuck || !strings.Contains(st.Summary, tc.says) {
				t.Errorf("met %v stuck %v %q; want met %v stuck %v and %q", st.Met, st.Stuck, st.Summary, tc.met, tc.stuck, tc.says)
			}
		})
	}
}
