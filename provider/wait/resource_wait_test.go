package wait_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	pvs         = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
)

func factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		provider.TypeName: providerserver.NewProtocol6WithError(provider.New("test")()),
	}
}

func object(name, conn, yaml string, dependsOn ...string) string {
	deps := ""
	if len(dependsOn) > 0 {
		deps = "depends_on = ["
		for i, d := range dependsOn {
			if i > 0 {
				deps += ", "
			}
			deps += d
		}
		deps += "]\n  "
	}
	return fmt.Sprintf(`
resource "k8sconnect_object" %q {
  %syaml_body = <<-YAML
%s
  YAML
  %s
}
`, name, deps, indent(yaml), conn)
}

func indent(s string) string {
	return regexp.MustCompile(`(?m)^`).ReplaceAllString(s, "    ")
}

// Scenario 1: a rollout gates a second Deployment.
func TestAccWait_deploymentRolloutGatesDependent(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	config := object("web", conn, deploymentYAML(ns, "web", 3, true)) + `
resource "k8sconnect_wait" "web" {
  resource_ref = k8sconnect_object.web.resource_ref
  wait_for     = { rollout = true, timeout = "3m" }
}
` + object("after", conn, deploymentYAML(ns, "after", 1, false), "k8sconnect_wait.web")

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{{
			PreConfig: func() { releaseLater(t, ns, "app=web", 3*time.Second) },
			Config:    config,
			Check: tfresource.ComposeAggregateTestCheckFunc(
				tfresource.TestCheckResourceAttr("k8sconnect_wait.web", "id", "apps/v1/Deployment/"+ns+"/web"),
				tfresource.TestCheckNoResourceAttr("k8sconnect_wait.web", "status"),
				func(*terraform.State) error { return acctest.CreatedAfterAvailable(t, ns, "web", 3, "after") },
			),
		}},
	})
}

// releaseLater lets held pods that match selector start after delay, as a
// slow kubelet would, and keeps releasing new ones until the test ends.
func releaseLater(t *testing.T, ns, selector string, delay time.Duration) {
	t.Helper()
	ri := acctest.Dynamic(t).Resource(pods).Namespace(ns)
	unhold := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, localcluster.HoldAnnotation))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { close(stop); wg.Wait() })
	go func() {
		defer wg.Done()
		for pause := delay; ; pause = 500 * time.Millisecond {
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
			list, err := ri.List(context.Background(), metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				continue
			}
			for _, p := range list.Items {
				if p.GetAnnotations()[localcluster.HoldAnnotation] == "true" {
					_, _ = ri.Patch(context.Background(), p.GetName(), ktypes.MergePatchType, unhold, metav1.PatchOptions{FieldManager: "test-kubelet"})
				}
			}
		}
	}()
}

// The error of a rollout that does not finish counts replicas and names the
// pods holding it up.
func TestAccWait_rolloutTimeoutExplainsReplicasAndPods(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	config := object("stuck", conn, deploymentYAML(ns, "stuck", 2, true)) + `
resource "k8sconnect_wait" "stuck" {
  resource_ref = k8sconnect_object.stuck.resource_ref
  wait_for     = { rollout = true, timeout = "12s" }
}
`
	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{{
			Config:      config,
			ExpectError: regexp.MustCompile(`(?s)Timed out waiting for Deployment.*0/2 replicas ready.*Replicas: 2 desired.*Pods not ready \(2 of 2\):\s+stuck-.*Pending`),
		}},
	})
}

func deploymentYAML(ns, name string, replicas int, held bool) string {
	annotations := ""
	if held {
		annotations = fmt.Sprintf("\n      annotations: {%q: \"true\"}", localcluster.HoldAnnotation)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata:
      labels: {app: %s}%s
    spec:
      containers: [{name: app, image: nginx}]`, name, ns, replicas, name, name, annotations)
}

// Scenario 2: a wait that times out fails the run and blocks its dependent,
// but neither taints nor recreates the Job; the next apply waits on the same Job.
func TestAccWait_timeoutLeavesObjectAndRetriesInPlace(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	job := fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: %s}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {%q: "true"}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox}]`, ns, localcluster.HoldAnnotation)
	dependent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after-migration, namespace: %s}\ndata: {done: \"yes\"}", ns)
	config := func(timeout string) string {
		return object("job", conn, job) + fmt.Sprintf(`
resource "k8sconnect_wait" "migrated" {
  resource_ref = k8sconnect_object.job.resource_ref
  wait_for     = { condition = "Complete", timeout = %q }
}
`, timeout) + object("after", conn, dependent, "k8sconnect_wait.migrated")
	}
	var uid string

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{
			{
				Config:      config("5s"),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting for Job.*Pods not ready`),
			},
			{
				PreConfig: func() {
					acctest.MustNotExist(t, configMaps, ns, "after-migration")
					uid = acctest.UID(t, jobs, ns, "migrate")
					acctest.ReleaseJob(t, ns, "migrate")
				},
				Config: config("2m"),
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_object.job", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("k8sconnect_wait.migrated", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("k8sconnect_object.after", plancheck.ResourceActionCreate),
					},
				},
				Check: tfresource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error {
						if got := acctest.UID(t, jobs, ns, "migrate"); got != uid {
							return fmt.Errorf("the Job was recreated: uid %s, was %s", got, uid)
						}
						return nil
					},
					acctest.Exists(t, configMaps, ns, "after-migration"),
				),
			},
		},
	})
}

// Scenario 3: a field another actor fills in later is waited for, exposed in
// status, and refreshed so a later change reaches what uses it.
func TestAccWait_fieldSetLaterFlowsToDependents(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	svc := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: lb, namespace: %s}
spec:
  type: LoadBalancer
  selector: {app: lb}
  ports: [{port: 80}]`, ns)
	consumer := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: consumer, namespace: %s}
data:
  hostname: ${k8sconnect_wait.lb.status.loadBalancer.ingress[0].hostname}`, ns)
	config := object("lb", conn, svc) + `
resource "k8sconnect_wait" "lb" {
  resource_ref = k8sconnect_object.lb.resource_ref
  wait_for     = { field = "status.loadBalancer.ingress[0].hostname", timeout = "2m" }
}
` + object("consumer", conn, consumer)
	hostnameIs := func(want string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue("k8sconnect_wait.lb", tfjsonpath.New("status"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"loadBalancer": knownvalue.ObjectExact(map[string]knownvalue.Check{
				"ingress": knownvalue.TupleExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{"hostname": knownvalue.StringExact(want)}),
				}),
			}),
		}))
	}

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{
			{
				PreConfig: func() {
					acctest.Later(t, services, ns, "lb", 3*time.Minute, func(*unstructured.Unstructured) error {
						return acctest.SetLoadBalancerHostname(t, ns, "lb", "lb-1.example.com")
					})
				},
				Config:            config,
				ConfigStateChecks: []statecheck.StateCheck{hostnameIs("lb-1.example.com")},
				Check: func(*terraform.State) error {
					return acctest.ConfigMapHas(t, ns, "consumer", "hostname", "lb-1.example.com")
				},
			},
			{
				PreConfig: func() {
					if err := acctest.SetLoadBalancerHostname(t, ns, "lb", "lb-2.example.com"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_wait.lb", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("k8sconnect_object.consumer", plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{hostnameIs("lb-2.example.com")},
				Check: func(*terraform.State) error {
					return acctest.ConfigMapHas(t, ns, "consumer", "hostname", "lb-2.example.com")
				},
			},
		},
	})
}

// Scenario 4: a PVC is Bound once the test, playing the provisioner, creates a
// volume for it and the cluster's binder binds the two.
func TestAccWait_fieldValuePVCBound(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	const class = "k8sconnect-test-manual"
	pvc := fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %s}
spec:
  storageClassName: %s
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}`, ns, class)
	dependent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: uses-data, namespace: %s}\ndata: {volume: data}", ns)
	config := object("pvc", conn, pvc) + `
resource "k8sconnect_wait" "bound" {
  resource_ref = k8sconnect_object.pvc.resource_ref
  wait_for     = { field_value = { "status.phase" = "Bound" }, timeout = "2m" }
}
` + object("after", conn, dependent, "k8sconnect_wait.bound")
	pvName := "pv-" + ns
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(pvs).Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{{
			PreConfig: func() {
				acctest.Later(t, schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, ns, "data", 3*time.Minute,
					func(claim *unstructured.Unstructured) error {
						if phase, _, _ := unstructured.NestedString(claim.Object, "status", "phase"); phase == "Bound" {
							return fmt.Errorf("the claim was Bound before any volume existed")
						}
						acctest.ApplyAs(t, "test-provisioner", pvs, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: %s}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: %s
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /tmp/k8sconnect-test}
  claimRef: {namespace: %s, name: data}`, pvName, class, ns))
						return nil
					})
			},
			Config: config,
			Check: tfresource.ComposeAggregateTestCheckFunc(
				tfresource.TestCheckNoResourceAttr("k8sconnect_wait.bound", "status"),
				acctest.Exists(t, configMaps, ns, "uses-data"),
			),
		}},
	})
}

// Scenario 5: StatefulSet and DaemonSet rollouts.
func TestAccWait_statefulSetAndDaemonSetRollouts(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	sts := fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: %s}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
      annotations: {%q: "true"}
    spec:
      containers: [{name: db, image: postgres}]`, ns, localcluster.HoldAnnotation)
	ds := fmt.Sprintf(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: %s}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata:
      labels: {app: agent}
      annotations: {%q: "true"}
    spec:
      containers: [{name: agent, image: fluent-bit}]`, ns, localcluster.HoldAnnotation)
	dependent := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: after-rollouts, namespace: %s}", ns)
	config := object("db", conn, sts) + object("agent", conn, ds) + `
resource "k8sconnect_wait" "db" {
  resource_ref = k8sconnect_object.db.resource_ref
  wait_for     = { rollout = true, timeout = "3m" }
}
resource "k8sconnect_wait" "agent" {
  resource_ref = k8sconnect_object.agent.resource_ref
  wait_for     = { rollout = true, timeout = "3m" }
}
` + object("after", conn, dependent, "k8sconnect_wait.db", "k8sconnect_wait.agent")

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{{
			PreConfig: func() {
				releaseLater(t, ns, "app=db", 3*time.Second)
				releaseLater(t, ns, "app=agent", 3*time.Second)
			},
			Config: config,
			Check: tfresource.ComposeAggregateTestCheckFunc(
				acctest.Exists(t, configMaps, ns, "after-rollouts"),
				func(*terraform.State) error {
					db, err := acctest.Get(t, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, ns, "db")
					if err != nil || db == nil {
						return fmt.Errorf("statefulset: %v", err)
					}
					if ready, _, _ := unstructured.NestedInt64(db.Object, "status", "readyReplicas"); ready != 2 {
						return fmt.Errorf("the StatefulSet has %d ready replicas after its rollout wait, want 2", ready)
					}
					agent, err := acctest.Get(t, schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, ns, "agent")
					if err != nil || agent == nil {
						return fmt.Errorf("daemonset: %v", err)
					}
					desired, _, _ := unstructured.NestedInt64(agent.Object, "status", "desiredNumberScheduled")
					available, _, _ := unstructured.NestedInt64(agent.Object, "status", "numberAvailable")
					if desired == 0 || available != desired {
						return fmt.Errorf("the DaemonSet has %d/%d pods available after its rollout wait", available, desired)
					}
					return nil
				},
			),
		}},
	})
}

// Scenario 5: waits that cannot work are refused at plan, before anything is created.
func TestAccWait_refusedAtPlan(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}", ns)
	waitOn := func(waitFor string) string {
		return object("cm", conn, cm) + fmt.Sprintf(`
resource "k8sconnect_wait" "cm" {
  resource_ref = k8sconnect_object.cm.resource_ref
  wait_for     = %s
}
`, waitFor)
	}
	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{
			{Config: waitOn(`{ rollout = true }`), PlanOnly: true, ExpectError: regexp.MustCompile(`ConfigMap \(v1\) has no rollout`)},
			{Config: waitOn(`{ condition = "Ready", timeout = "0s" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`timeout must be positive`)},
			{Config: waitOn(`{ condition = "Ready", timeout = "-5m" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`timeout must be positive`)},
			{Config: waitOn(`{ condition = "Ready", rollout = true }`), PlanOnly: true, ExpectError: regexp.MustCompile(`More than one thing to wait for`)},
			{Config: waitOn(`{ timeout = "1m" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`Nothing to wait for`)},
			{Config: waitOn(`{ field = "status..phase" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`empty field name`)},
		},
	})
	acctest.MustNotExist(t, configMaps, ns, "settings")
}

// An object named in resource_ref before it exists is waited for within the
// same timeout; once it is deleted the wait leaves state, so the next plan
// waits again.
func TestAccWait_objectAppearsLaterAndLeavesWithIt(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	config := fmt.Sprintf(`
resource "k8sconnect_wait" "later" {
  resource_ref = {
    api_version = "v1"
    kind        = "ConfigMap"
    namespace   = %q
    name        = "later"
    cluster_connection = {
      host                   = %q
      cluster_ca_certificate = %q
      token                  = %q
    }
  }
  wait_for = { field = "data.key", timeout = "20s" }
}
`, ns, c.Host, string(c.CAPEM), c.Token)
	cms := acctest.Dynamic(t).Resource(configMaps).Namespace(ns)

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{
			{
				PreConfig: func() {
					go func() {
						time.Sleep(3 * time.Second)
						cm := &unstructured.Unstructured{Object: map[string]any{
							"apiVersion": "v1", "kind": "ConfigMap",
							"metadata": map[string]any{"name": "later", "namespace": ns},
							"data":     map[string]any{"key": "value"},
						}}
						if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
							t.Errorf("creating the ConfigMap: %v", err)
						}
					}()
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_wait.later", tfjsonpath.New("status"),
						knownvalue.ObjectExact(map[string]knownvalue.Check{"data": knownvalue.ObjectExact(map[string]knownvalue.Check{
							"key": knownvalue.StringExact("value")})})),
				},
			},
			{
				PreConfig: func() {
					if err := cms.Delete(context.Background(), "later", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A replaced object is not the one waited for: the wait is created again.
				PreConfig: func() {
					_, err := cms.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "v1", "kind": "ConfigMap",
						"metadata": map[string]any{"name": "later", "namespace": ns},
						"data":     map[string]any{"key": "again"},
					}}, metav1.CreateOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("k8sconnect_wait.later", tfjsonpath.New("status").AtMapKey("data").AtMapKey("key"),
						knownvalue.StringExact("again")),
				},
			},
			{
				// The field gone from the object: the next plan waits again.
				PreConfig: func() {
					if _, err := cms.Patch(context.Background(), "later", ktypes.MergePatchType,
						[]byte(`{"data":{"key":null}}`), metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("k8sconnect_wait.later", plancheck.ResourceActionUpdate),
					},
				},
				ExpectError: regexp.MustCompile(`Timed out waiting for ConfigMap`),
			},
		},
	})
}

// field_value in kubectl's JSONPath filter form (status.conditions selected
// by type) waits like the [type=Available] form: the dependent is created
// only after the Deployment is Available.
func TestAccWait_fieldValueWithJSONPathFilter(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	config := object("web", conn, deploymentYAML(ns, "web", 2, true)) + `
resource "k8sconnect_wait" "web" {
  resource_ref = k8sconnect_object.web.resource_ref
  wait_for     = { field_value = { "status.conditions[?(@.type=='Available')].status" = "True" }, timeout = "3m" }
}
` + object("after", conn, deploymentYAML(ns, "after", 1, false), "k8sconnect_wait.web")

	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: factories(),
		Steps: []tfresource.TestStep{{
			PreConfig: func() { releaseLater(t, ns, "app=web", 3*time.Second) },
			Config:    config,
			Check: tfresource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error { return acctest.CreatedAfterAvailable(t, ns, "web", 2, "after") },
			),
		}},
	})
}
