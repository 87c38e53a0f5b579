package wait_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
)

// ready = true works for any kind: a Deployment that rolls out, a Job that
// completes, and a custom resource whose controller (a test actor here)
// reports it not ready, then sets its Ready condition through the status
// subresource its CRD declares. The dependent of each wait is created only
// after it is met. A custom resource that reports Stalled ends its wait at
// once, well before the timeout, with the controller's message and without
// tainting or touching the object. (A custom resource with no status at all
// is ready at once: TestAccWait_readyForCustomResourcesWithoutStatus.)
func TestAccWait_readyForAnyKind(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	group := acctest.Name("g") + ".ready.k8sconnect.test"
	databases := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "databases"}
	crd := fixtures.CRD(group, "Database", "size: {type: integer}") + `
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
      subresources: {status: {}}
`
	job := fmt.Sprintf("apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: %s}\n"+
		"spec: {template: {spec: {restartPolicy: Never, containers: [{name: m, image: busybox}]}}}\n", ns)
	db := func(name string) string {
		return fmt.Sprintf("apiVersion: %s/v1\nkind: Database\nmetadata: {name: %s, namespace: %s}\nspec: {size: 1}\n", group, name, ns)
	}
	wait := func(name, timeout string) string {
		return fmt.Sprintf(`
resource "k8sconnect_wait" %[1]q {
  resource_ref = k8sconnect_object.%[1]s.resource_ref
  wait_for     = { ready = true, timeout = %[2]q }
}
`, name, timeout)
	}
	// The databases first, which their controller then reports on: one
	// still provisioning, one stalled.
	objects := object("crd", conn, crd) +
		object("orders", conn, db("orders"), "k8sconnect_object.crd") +
		object("broken", conn, db("broken"), "k8sconnect_object.crd")
	w := acctest.NewWorkdir(t)
	w.Write(objects)
	w.Cleanup()
	w.MustApply()
	acctest.PatchStatusAs(t, "database-controller", databases, ns, "orders",
		`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Provisioning"}]}}`)
	acctest.PatchStatusAs(t, "database-controller", databases, ns, "broken",
		`{"status":{"conditions":[{"type":"Stalled","status":"True","reason":"QuotaExceeded","message":"no quota left in the region"}]}}`)

	config := objects +
		object("web", conn, deploymentYAML(ns, "web", 2, true)) + wait("web", "3m") +
		object("migrate", conn, job) + wait("migrate", "3m") + wait("orders", "3m") +
		object("after", conn, deploymentYAML(ns, "after", 1, false), "k8sconnect_wait.web", "k8sconnect_wait.migrate", "k8sconnect_wait.orders")
	releaseLater(t, ns, "app=web", 3*time.Second)
	acctest.Later(t, databases, ns, "orders", 2*time.Minute, func(*unstructured.Unstructured) error {
		time.Sleep(5 * time.Second) // a controller takes a moment to provision
		acctest.PatchStatusAs(t, "database-controller", databases, ns, "orders",
			`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Provisioned"}]}}`)
		return nil
	})
	w.Write(config)
	start := time.Now()
	w.MustApply()
	if took := time.Since(start); took < 5*time.Second {
		t.Errorf("the wait on the database should last until its controller says Ready, but the apply took %s", took)
	}
	if err := acctest.CreatedAfterAvailable(t, ns, "web", 2, "after"); err != nil {
		t.Error(err)
	}
	w.MustPlanNoChanges()

	// A stalled custom resource: the wait fails at once, naming why.
	config += wait("broken", "5m")
	w.Write(config)
	start = time.Now()
	r := w.Apply()
	w.MustFail(r, "apply with a stalled custom resource")
	if took := time.Since(start); took > 2*time.Minute {
		t.Errorf("a stalled resource should end the wait at once, not after %s", took)
	}
	if !strings.Contains(r.Output, "no quota left in the region") {
		t.Errorf("the error should carry the controller's message:\n%s", r.Output)
	}
	if strings.Contains(r.Output, "tainted") {
		t.Errorf("a failed wait must not taint anything:\n%s", r.Output)
	}
	acctest.MustGet(t, databases, ns, "broken")
}

// A custom resource with no status is ready at once, as kstatus, Helm and
// Flux judge it, whether or not its CRD declares a status subresource (one
// rule for ready, the Helm release's wait and the manifest set's); the apply
// warns that no controller has reported, and a wait for its Ready condition
// is how to wait for the controller, which here never reports: that wait
// times out and leaves the object as it is, untainted.
func TestAccWait_readyForCustomResourcesWithoutStatus(t *testing.T) {
	ns := acctest.Namespace(t)
	conn := acctest.Connection(t)
	group := acctest.Name("g") + ".nostatus.k8sconnect.test"
	settings := fixtures.CRD(group, "Setting", "value: {type: string}")
	queues := fixtures.CRD(group, "Queue", "size: {type: integer}") + `
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
      subresources: {status: {}}
`
	setting := fmt.Sprintf("apiVersion: %s/v1\nkind: Setting\nmetadata: {name: mode, namespace: %s}\nspec: {value: fast}\n", group, ns)
	queue := fmt.Sprintf("apiVersion: %s/v1\nkind: Queue\nmetadata: {name: jobs, namespace: %s}\nspec: {size: 3}\n", group, ns)
	config := object("settings", conn, settings) + object("queues", conn, queues) +
		object("mode", conn, setting, "k8sconnect_object.settings") + `
resource "k8sconnect_wait" "mode" {
  resource_ref = k8sconnect_object.mode.resource_ref
  wait_for     = { ready = true, timeout = "2m" }
}
`
	w := acctest.NewWorkdir(t)
	w.Write(config)
	w.Cleanup()
	start := time.Now()
	w.MustApply()
	if took := time.Since(start); took > time.Minute {
		t.Errorf("a kind nothing reports on should be ready at once, but the apply took %s", took)
	}

	config += object("jobs", conn, queue, "k8sconnect_object.queues") + `
resource "k8sconnect_wait" "jobs" {
  resource_ref = k8sconnect_object.jobs.resource_ref
  wait_for     = { ready = true, timeout = "2m" }
}
`
	w.Write(config)
	start = time.Now()
	r := w.MustApply()
	if took := time.Since(start); took > time.Minute {
		t.Errorf("a custom resource without status should be ready at once, but the apply took %s", took)
	}
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || (strings.Contains(d.Summary, "jobs is ready without a status") && strings.Contains(d.Detail, `condition = "Ready"`))
	}
	if !warned {
		t.Errorf("the apply should warn that the Queue is ready without a status, naming condition = \"Ready\": %v", r.Warnings())
	}

	config += `
resource "k8sconnect_wait" "jobs_reported" {
  resource_ref = k8sconnect_object.jobs.resource_ref
  wait_for     = { condition = "Ready", timeout = "6s" }
}
`
	w.Write(config)
	r = w.Apply()
	w.MustFail(r, "apply waiting for the Ready condition of a custom resource whose controller never reports")
	if strings.Contains(r.Output, "tainted") {
		t.Errorf("a failed wait must not taint anything:\n%s", r.Output)
	}
	acctest.MustGet(t, schema.GroupVersionResource{Group: group, Version: "v1", Resource: "queues"}, ns, "jobs")
}
