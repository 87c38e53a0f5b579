// Package timeouts_test runs the timeouts block of every resource
// through the real engine against the local cluster: an operation whose
// timeouts setting ends before the resource's own timeout fails when the
// setting says, names it, and leaves what it made as it is.
//
// Run with: go test ./internal/testing/timeouts -v (and K8SCONNECT_ENGINE=tofu).
package timeouts_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// slack is what a run may take beyond the timeout it is bounded by: the
// engine's start, its plan and the provider's start on a busy 2-core machine.
const slack = 15 * time.Second

// heldDeployment is a Deployment whose pod kwok keeps Pending, so it is
// never ready.
func heldDeployment(ns, name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
      annotations: {%[3]s: "true"}
    spec:
      containers: [{name: app, image: registry.k8s.io/pause:3.10}]
`, ns, name, localcluster.HoldAnnotation)
}

func heredoc(s string) string {
	return "<<-YAML\n" + s + "YAML\n"
}

func timed(t *testing.T, what string, run func() acctest.Result) (acctest.Result, time.Duration) {
	t.Helper()
	begin := time.Now()
	r := run()
	took := time.Since(begin)
	t.Logf("%s %s: %v in %s", acctest.Engine(), what, r.Err, took.Round(100*time.Millisecond))
	for _, d := range append(r.Errors(), r.Warnings()...) {
		t.Logf("  %s: %s: %s", d.Severity, d.Summary, d.Detail)
	}
	return r, took
}

// expectTimedOut checks a failed run: an error says all of parts, and the
// run took at least limit and no more than limit and slack.
func expectTimedOut(t *testing.T, w *acctest.Workdir, r acctest.Result, took, limit time.Duration, what string, parts ...string) {
	t.Helper()
	w.MustFail(r, what)
	if !r.HasError(parts...) {
		t.Errorf("no error says all of %q", parts)
	}
	if took < limit || took > limit+slack {
		t.Errorf("the %s failed after %s; the timeout is %s", what, took.Round(100*time.Millisecond), limit)
	}
}

func expectNotTainted(t *testing.T, w *acctest.Workdir, addresses ...string) {
	t.Helper()
	show := w.Run("show", "-json")
	if show.Err != nil {
		t.Fatalf("show: %v\n%s", show.Err, show.Output)
	}
	if strings.Contains(show.Output, `"tainted":true`) {
		t.Errorf("something is tainted:\n%s", show.Output)
	}
	if got := w.StateList(); !slices.Equal(got, addresses) {
		t.Errorf("state holds %v, want %v", got, addresses)
	}
}

// A k8sconnect_wait whose wait_for.timeout is ten minutes and whose
// timeouts.create is 5s fails in about 5s, naming timeouts.create; the
// object is untouched and nothing is tainted.
func TestAccTimeoutsWaitCreate(t *testing.T) {
	ns := acctest.Namespace(t)
	object := fmt.Sprintf(`
resource "k8sconnect_object" "web" {
  yaml_body = %s
  %s
}
`, heredoc(heldDeployment(ns, "web")), acctest.Connection(t))
	w := acctest.NewWorkdir(t)
	w.Write(object)
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, deployments, ns, "web")

	w.Write(object + `
resource "k8sconnect_wait" "web" {
  resource_ref = k8sconnect_object.web.resource_ref
  wait_for     = { rollout = true, timeout = "10m" }
  timeouts {
    create = "5s"
  }
}
`)
	r, took := timed(t, "apply", w.Apply)
	expectTimedOut(t, w, r, took, 5*time.Second, "apply",
		`create timeout (timeouts.create = "5s") ran out while waiting for rollout on Deployment `+ns+"/web", "wait_for.timeout (10m0s)")
	expectNotTainted(t, w, "k8sconnect_object.web")
	if got := acctest.UID(t, deployments, ns, "web"); got != uid {
		t.Errorf("the Deployment was replaced: UID %s -> %s", uid, got)
	}
}

// A manifest set whose Deployment never gets ready, with timeout = "10m"
// and timeouts.create = "5s": the apply fails in about 5s naming
// timeouts.create, the Deployment stays, and the set is not in state (a
// create that failed keeps nothing, so nothing is tainted).
func TestAccTimeoutsManifestSetCreate(t *testing.T) {
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_manifest_set" "app" {
  yaml_body = %s
  timeout   = "10m"
  timeouts {
    create = "5s"
  }
  %s
}
`, heredoc(heldDeployment(ns, "web")), acctest.Connection(t)))
	w.Cleanup()
	r, took := timed(t, "apply", w.Apply)
	expectTimedOut(t, w, r, took, 5*time.Second, "apply",
		`the create timeout (timeouts.create = "5s") ran out while waiting for`, ns+"/web", "to be ready", "nothing is tainted")
	expectNotTainted(t, w)
	acctest.MustGet(t, deployments, ns, "web") // left as it is
}

// A Helm release whose pre-install hook never completes, its timeout ten
// minutes and timeouts.create 5s: the apply fails in about 5s, naming
// timeouts.create and the hook, which is left as it is.
func TestAccTimeoutsHelmReleaseHook(t *testing.T) {
	ns := acctest.Namespace(t)
	chart, err := filepath.Abs(filepath.Join("testdata", "charts", "heldhook"))
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = "held"
  namespace = %q
  chart     = %q
  timeout   = "10m"
  timeouts {
    create = "5s"
  }
  %s
}
`, ns, chart, acctest.Connection(t)))
	w.Cleanup()
	r, took := timed(t, "apply", w.Apply)
	expectTimedOut(t, w, r, took, 5*time.Second, "apply",
		`the create timeout (timeouts.create = "5s") ran out while waiting for Job `+ns+"/held-setup", "pre-install hook")
	expectNotTainted(t, w)
	acctest.MustGet(t, jobs, ns, "held-setup") // the hook is left as it is
}

// A destroy of an object that a finalizer holds, with timeouts.delete = "3s"
// and no delete_timeout (five minutes): the destroy fails in about 3s naming
// timeouts.delete and the finalizer, and the object stays in state.
func TestAccTimeoutsObjectDelete(t *testing.T) {
	ns := acctest.Namespace(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "held" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: held
      namespace: %s
      finalizers: [k8sconnect.test/keep]
    data: {greeting: hello}
  YAML
  timeouts {
    delete = "3s"
  }
  %s
}
`, ns, acctest.Connection(t)))
	w.MustApply()
	t.Cleanup(func() {
		release(t, ns, "held")
		w.Destroy()
	})
	r, took := timed(t, "destroy", w.Destroy)
	expectTimedOut(t, w, r, took, 3*time.Second, "destroy",
		`the delete timeout (timeouts.delete = "3s") ran out while waiting for ConfigMap `+ns+"/held to be deleted",
		"k8sconnect.test/keep", "stays in state")
	if got := w.StateList(); !slices.Equal(got, []string{"k8sconnect_object.held"}) {
		t.Errorf("state holds %v after the failed destroy, want the object", got)
	}
}

// release removes the finalizers of ConfigMap ns/name.
func release(t *testing.T, ns, name string) {
	_, err := acctest.Dynamic(t).Resource(configMaps).Namespace(ns).Patch(context.Background(), name, ktypes.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Logf("releasing %s/%s: %v", ns, name, err)
	}
}

// A refresh through a link that stalls the object's reads, with
// timeouts.read = "3s" and a request_timeout of a minute: the refresh ends
// in about 3s with a warning naming timeouts.read, and state is kept.
func TestAccTimeoutsRefreshStalled(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: stalled
      namespace: %s
    data: {greeting: hello}
  YAML
  timeouts {
    read = "3s"
  }
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
    request_timeout        = "60s"
  }
}
`, ns, proxy.URL, string(proxy.CAPEM), cluster.Token))
	w.Cleanup()
	w.MustApply()
	before := w.StateAttribute("k8sconnect_object.cm", "uid")

	fault := proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/configmaps/stalled"},
		Action: faultproxy.Pause, MaxHold: 30 * time.Second})
	t.Cleanup(fault.Remove)
	r, took := timed(t, "refresh", func() acctest.Result {
		return w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	})
	acctest.ExpectActed(t, fault)
	if r.Err != nil {
		t.Fatalf("the refresh failed: %v", r.Err)
	}
	warned := false
	for _, d := range r.Warnings() {
		warned = warned || (strings.Contains(d.Summary, "state kept") &&
			strings.Contains(d.Detail, `the read timeout (timeouts.read = "3s") ran out while refreshing`))
	}
	if !warned {
		t.Error("no warning says that timeouts.read ran out and state was kept")
	}
	if took < 3*time.Second || took > 3*time.Second+slack {
		t.Errorf("the refresh took %s; timeouts.read is 3s and request_timeout 60s", took.Round(100*time.Millisecond))
	}
	if got := w.StateAttribute("k8sconnect_object.cm", "uid"); got != before {
		t.Errorf("the refresh changed state: uid %q -> %q", before, got)
	}
	fault.Remove()
}

// What a careless user writes: a value that is not a duration, and "0s",
// fail at plan with an error naming the setting, before anything is sent.
func TestAccTimeoutsBadValuesFailAtPlan(t *testing.T) {
	ns := acctest.Namespace(t)
	for _, bad := range []string{"soon", "0s"} {
		w := acctest.NewWorkdir(t)
		w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: never, namespace: %s}
  YAML
  timeouts {
    create = %q
  }
  %s
}
`, ns, bad, acctest.Connection(t)))
		r := w.Plan()
		w.MustFail(r, "plan")
		if !r.HasError(fmt.Sprintf("%q is not a positive duration", bad)) {
			t.Errorf("timeouts.create = %q: no clear error:\n%s", bad, r.Output)
		}
	}
	acctest.MustNotExist(t, configMaps, ns, "never")
}
