package object_test

// Ownership safety: no object is ever taken over, reset or deleted
// behind its owner's back. Each test plays a careless or unlucky user against
// the real API server and checks what that user would check: the object in
// the cluster, its UID, the state, the exit code and the message.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// declared is a k8sconnect_object named address that declares a ConfigMap
// with a value saying which declaration wrote it.
func declared(address, ns, name, conn string) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" %[1]q {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %[3]s
      namespace: %[2]s
      labels: {declared-by: %[1]s}
    data:
      declared-by: %[1]s
  YAML
  %[4]s
}
`, address, ns, name, conn)
}

func liveDeclaredBy(t *testing.T, ns, name string) (by, owner, rv, uid string) {
	t.Helper()
	obj := acctest.MustGet(t, configMaps, ns, name)
	data, _ := obj.Object["data"].(map[string]any)
	by, _ = data["declared-by"].(string)
	return by, obj.GetAnnotations()["k8sconnect.io/owned-by"], obj.GetResourceVersion(), string(obj.GetUID())
}

// Two resources in one configuration declare the same ConfigMap; Terraform
// creates them in parallel. Exactly one create succeeds; the other fails
// naming the object and the winner's id, changes nothing on the winner's
// object, and never reaches state, so removing it deletes nothing.
func TestAccSafety_sameObjectTwiceInOneConfiguration(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("twice"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(declared("a", ns, name, conn) + declared("b", ns, name, conn))
	w.Cleanup()
	r := w.Apply()
	w.MustFail(r, "apply of two declarations of one object")
	state := w.StateList()
	if len(state) != 1 {
		t.Fatalf("want exactly one of the two declarations in state, have %q\n%s", state, r.Output)
	}
	winner := strings.TrimPrefix(state[0], "k8sconnect_object.")
	loser := map[string]string{"a": "b", "b": "a"}[winner]
	winnerID := w.StateAttribute(state[0], "id")
	by, owner, rv, uid := liveDeclaredBy(t, ns, name)
	if by != winner || owner != winnerID {
		t.Fatalf("the object holds declared-by=%q owned-by=%q; want the winner's (%s, id %s)", by, owner, winner, winnerID)
	}
	if !r.HasError("already exists", name, winnerID) {
		t.Fatalf("the loser's error does not name the object and the winner's id %s: %+v", winnerID, r.Errors())
	}

	// Running again changes nothing: the loser fails the same way, and the
	// winner's object keeps its resourceVersion.
	r = w.Apply()
	w.MustFail(r, "second apply")
	if _, _, rv2, _ := liveDeclaredBy(t, ns, name); rv2 != rv {
		t.Fatalf("the losing declaration wrote to the object: resourceVersion %s -> %s", rv, rv2)
	}
	// The user removes the losing declaration: nothing is deleted, nothing
	// changes.
	w.Write(declared(winner, ns, name, conn))
	r = w.MustApply()
	if add, change, remove := r.Changes(); add != 0 || change != 0 || remove != 0 {
		t.Fatalf("removing the loser %s planned +%d ~%d -%d", loser, add, change, remove)
	}
	if _, _, _, uid2 := liveDeclaredBy(t, ns, name); uid2 != uid {
		t.Fatalf("the object was replaced: UID %s -> %s", uid, uid2)
	}
}

// A Namespace declared in two states (two teams, two workspaces). The second
// create fails naming the first resource's id; destroying the second state
// deletes nothing, so the Namespace and what is inside survive. Then two
// states race to create one object at the same moment: exactly one wins.
func TestAccSafety_sameObjectInTwoStates(t *testing.T) {
	t.Parallel()
	conn := acctest.Connection(t)
	ns := acctest.Name("shared")
	nsConfig := func(address string) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" %q {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Namespace
    metadata:
      name: %s
  YAML
  %s
}
`, address, ns, conn)
	}
	first := acctest.NewWorkdir(t)
	first.Write(nsConfig("ns") + declared("inside", ns, "inside", conn))
	first.Cleanup()
	first.MustApply()
	firstID := first.StateAttribute("k8sconnect_object.ns", "id")
	nsUID := acctest.UID(t, namespaces, "", ns)

	second := acctest.NewWorkdir(t)
	second.Write(nsConfig("team_b"))
	r := second.Apply()
	second.MustFail(r, "apply of a Namespace another state created")
	if !r.HasError("already exists", ns, firstID) {
		t.Fatalf("the error does not name the Namespace and the owning id %s: %+v", firstID, r.Errors())
	}
	if got := second.StateList(); len(got) != 0 {
		t.Fatalf("the refused declaration is in state: %q", got)
	}
	// Destroying the refused state deletes nothing. (The engine first plans
	// the configuration, whose create is still refused; tofu stops there,
	// terraform does not.) Then the user removes the declaration and
	// destroys again.
	if r := second.Destroy(); r.Err != nil && !r.HasError("already exists", firstID) {
		t.Fatalf("destroy of the refused state failed for another reason: %v\n%s", r.Err, r.Output)
	}
	second.Write("")
	if r := second.Destroy(); r.Err != nil {
		t.Fatalf("destroy of the refused state without its declaration failed: %v\n%s", r.Err, r.Output)
	}
	if got := acctest.UID(t, namespaces, "", ns); got != nsUID {
		t.Fatalf("destroying the other state replaced or deleted the Namespace: UID %s -> %s", nsUID, got)
	}
	acctest.MustGet(t, configMaps, ns, "inside")

	// At the same moment: two states, one new ConfigMap.
	name := acctest.Name("race")
	racers := []*acctest.Workdir{acctest.NewWorkdir(t), acctest.NewWorkdir(t)}
	results := make([]acctest.Result, len(racers))
	var wg sync.WaitGroup
	for i, w := range racers {
		w.Write(declared(fmt.Sprintf("racer%d", i), ns, name, conn))
		w.Cleanup()
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = w.Apply() }()
	}
	wg.Wait()
	won := -1
	for i, r := range results {
		if r.Err == nil {
			if won >= 0 {
				t.Fatalf("both states created %s", name)
			}
			won = i
		}
	}
	if won < 0 {
		t.Fatalf("neither state created %s:\n%s\n%s", name, results[0].Output, results[1].Output)
	}
	lost := 1 - won
	racers[lost].MustFail(results[lost], "the losing apply")
	wonID := racers[won].StateAttribute("k8sconnect_object.racer"+fmt.Sprint(won), "id")
	if !results[lost].HasError("already exists", name, wonID) {
		t.Fatalf("the losing run does not name the winner's id %s: %+v", wonID, results[lost].Errors())
	}
	if by, owner, _, _ := liveDeclaredBy(t, ns, name); by != fmt.Sprintf("racer%d", won) || owner != wonID {
		t.Fatalf("the object holds declared-by=%q owned-by=%q, want racer%d's", by, owner, won)
	}
	racers[lost].Write("") // its cleanup's destroy would plan the refused create again
}

// Someone deletes our ConfigMap and creates another of the same name. An
// update bound to our UID refuses it, refresh lets go of ours and leaves theirs,
// and destroy never deletes theirs.
func TestAccSafety_objectRecreatedBySomeoneElse(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("theirs"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(conn, ns, name, "ours"))
	w.Cleanup()
	w.MustApply()
	ours := acctest.UID(t, configMaps, ns, name)
	if got := w.StateAttribute("k8sconnect_object.cm", "uid"); got != ours {
		t.Fatalf("state uid = %q, want the object's %s", got, ours)
	}
	// A plan is saved; then someone deletes our ConfigMap and creates their
	// own under the same name.
	w.Write(configMapConfig(conn, ns, name, "changed"))
	if r := w.Run("plan", "-input=false", "-out=saved.tfplan"); r.Err != nil {
		t.Fatalf("plan -out failed: %v\n%s", r.Err, r.Output)
	}
	theirs := replaceAsSomeoneElse(t, ns, name)

	// Applying the saved plan: the final plan finds their object and stops,
	// naming both UIDs; so does an apply that skips the refresh.
	for _, args := range [][]string{{"saved.tfplan"}, {"-refresh=false"}} {
		r := w.Run(append([]string{"apply", "-auto-approve", "-input=false", "-json"}, args...)...)
		w.MustFail(r, fmt.Sprint("apply ", args, " onto someone else's object"))
		if !r.HasError("not the object this resource manages", ours, theirs) {
			t.Fatalf("apply %v: the error does not name both UIDs: %+v", args, r.Errors())
		}
		expectGreeting(t, ns, name, "theirs", theirs)
	}

	// Destroy without a refresh: the delete finds their object and leaves it.
	r := w.Run("destroy", "-auto-approve", "-input=false", "-json", "-refresh=false")
	if r.Err != nil {
		t.Fatalf("destroy failed: %v\n%s", r.Err, r.Output)
	}
	if ws := r.Warnings(); len(ws) != 1 || !strings.Contains(ws[0].Summary, "Left in place") || !strings.Contains(ws[0].Detail, theirs) {
		t.Fatalf("destroy should warn that it left %s (UID %s) in place: %+v", name, theirs, ws)
	}
	expectGreeting(t, ns, name, "theirs", theirs)

	// With a refresh: ours is gone from state, theirs stays, and a create of
	// the declaration refuses their object at plan time.
	w.Write(configMapConfig(conn, ns, name, "ours"))
	r = w.Plan()
	w.MustFail(r, "plan onto someone else's object")
	if !r.HasError("already exists", "does not manage it") {
		t.Fatalf("the plan does not refuse their object: %+v", r.Errors())
	}
	expectGreeting(t, ns, name, "theirs", theirs)
}

func expectGreeting(t *testing.T, ns, name, greeting, uid string) {
	t.Helper()
	obj := acctest.MustGet(t, configMaps, ns, name)
	if got := obj.Object["data"].(map[string]any)["greeting"]; got != greeting || string(obj.GetUID()) != uid {
		t.Fatalf("%s/%s: greeting %v, UID %s; want %q and UID %s", ns, name, got, obj.GetUID(), greeting, uid)
	}
}

// A Deployment we created with replicas: 4; the user adds spec.replicas to
// ignore_fields to hand it to an autoscaler. The plan says it is handed over,
// with its value; the apply keeps 4 in the cluster, no longer ours.
func TestAccSafety_ignoreFieldsHandsOverAFieldOnlyWeOwn(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("web"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 4, ""))
	w.Cleanup()
	w.MustApply()
	uid := acctest.UID(t, deployments, ns, name)

	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 4, `"spec.replicas"`))
	r := w.Plan()
	onlyWarning(t, r, "Fields handed over", "spec.replicas = 4", "keep their current values")
	w.MustApply()
	if got := replicasIn(t, ns, name); got != 4 {
		t.Fatalf("replicas = %d after handing the field over, want 4 (kept)", got)
	}
	live := acctest.MustGet(t, deployments, ns, name)
	for _, e := range live.GetManagedFields() {
		if e.Manager == "k8sconnect" && e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:replicas"`) {
			t.Fatalf("k8sconnect still owns spec.replicas: %s", e.FieldsV1.GetRawString())
		}
	}
	if string(live.GetUID()) != uid {
		t.Fatal("the Deployment was replaced")
	}
	// Nothing left to do, and an autoscaler's later change is not drift.
	w.MustPlanNoChanges()
	scaleAs(t, "hpa-controller", ns, name, 7)
	w.MustPlanNoChanges()
	if got := replicasIn(t, ns, name); got != 7 {
		t.Fatalf("replicas = %d, want the autoscaler's 7", got)
	}
}

// The kubeconfig's context is switched, or the file edited, so that the same
// configuration now reaches another cluster. Plan fails naming both clusters;
// the state keeps the object; nothing is created in the other cluster.
func TestAccSafety_switchedClusterIsRefused(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	clusters := acctest.TwoClusterKubeconfig(t, ns)
	first, second := clusters.First, clusters.Second
	name := acctest.Name("where")
	conn := func(context string) string {
		return fmt.Sprintf("cluster_connection = {\n    kubeconfig_file = %q\n    context = %q\n  }", clusters.Kubeconfig, context)
	}
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(conn("first"), ns, name, "hello"))
	w.Cleanup()
	w.MustApply()
	firstUID := acctest.KubeSystemUID(t, first)
	secondUID := acctest.KubeSystemUID(t, second)
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != firstUID {
		t.Fatalf("state cluster_uid = %q, want kube-system's %s", got, firstUID)
	}
	refused := func(what string) {
		t.Helper()
		r := w.Plan()
		w.MustFail(r, what)
		if !r.HasError("different cluster", firstUID, secondUID) {
			t.Fatalf("%s: the error does not name both clusters (%s, %s): %+v", what, firstUID, secondUID, r.Errors())
		}
		if got := w.StateList(); len(got) != 1 {
			t.Fatalf("%s: state lost the object: %q", what, got)
		}
		if _, err := kubernetes.NewForConfigOrDie(second.RESTConfig()).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			t.Fatalf("%s: the object was created in the second cluster", what)
		}
	}
	w.Write(configMapConfig(conn("second"), ns, name, "hello"))
	refused("plan after switching the context")
	// The same context name, edited to point at the other cluster.
	w.Write(configMapConfig(conn("first"), ns, name, "hello"))
	clusters.Swap(t)
	refused("plan after editing the kubeconfig file")
	clusters.Swap(t)
	w.MustPlanNoChanges()
}

// The token expires between two runs. Refresh keeps the state and says what
// to do; nothing is forgotten or planned as a create; a renewed token plans
// nothing.
func TestAccSafety_expiredTokenKeepsState(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	kc := acctest.NewTokenKubeconfig(t, c, c.Token)
	kubeconfig, writeToken := kc.Path, kc.Write
	ns, name := acctest.Namespace(t), acctest.Name("token")
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, "hello"))
	w.Cleanup()
	w.MustApply()

	writeToken("expired-" + c.Token[:8])
	r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	var warned bool
	for _, d := range r.Warnings() {
		warned = warned || (strings.Contains(d.Summary, "state kept") && strings.Contains(d.Detail, "401")) ||
			strings.Contains(d.Summary, "Stored credentials refused: state not refreshed")
	}
	if !warned {
		t.Fatalf("a refresh with an expired token should warn that state was kept, with the remedy:\n%s", r.Output)
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("the refresh with an expired token dropped the object from state: %q", got)
	}
	r = w.Plan()
	w.MustFail(r, "plan with an expired token")
	if !r.HasError("expired") {
		t.Fatalf("the plan's error does not say the credentials expired: %+v", r.Errors())
	}
	if strings.Contains(r.Output, c.Token) {
		t.Fatal("the output holds the token")
	}
	writeToken(c.Token)
	w.MustPlanNoChanges()
}

// A custom resource moves from v1alpha1 to v1 of the same group and kind: the
// server stores one object, so it is updated in place, same UID.
func TestAccSafety_apiVersionChangeUpdatesInPlace(t *testing.T) {
	t.Parallel()
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	group := acctest.Name("versions") + ".example.com"
	crd := fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = <<-YAML
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.%[1]s
    spec:
      group: %[1]s
      scope: Namespaced
      names: {plural: widgets, singular: widget, kind: Widget}
      versions:
        - name: v1alpha1
          served: true
          storage: false
          schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
        - name: v1
          served: true
          storage: true
          schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
  YAML
  %[2]s
}
`, group, conn)
	widget := func(version, size string) string {
		return crd + fmt.Sprintf(`
resource "k8sconnect_object" "widget" {
  yaml_body = <<-YAML
    apiVersion: %s/%s
    kind: Widget
    metadata: {name: w, namespace: %s}
    spec: {size: %s}
  YAML
  %s
}
`, group, version, ns, size, conn)
	}
	w := acctest.NewWorkdir(t)
	w.Write(widget("v1alpha1", "small"))
	w.Cleanup()
	w.MustApply()
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	uid := acctest.UID(t, gvr, ns, "w")
	w.Write(widget("v1", "large"))
	r := w.MustApply()
	if add, change, remove := r.Changes(); add != 0 || change != 1 || remove != 0 {
		t.Fatalf("apiVersion change planned +%d ~%d -%d, want an update in place", add, change, remove)
	}
	if got := acctest.UID(t, gvr, ns, "w"); got != uid {
		t.Fatalf("the custom resource was replaced: UID %s -> %s", uid, got)
	}
	w.MustPlanNoChanges()
}

// A change the API server refuses in place (a PersistentVolumeClaim's access
// modes) is planned as a replacement, and the warning says what is lost and how
// to keep it.
func TestAccSafety_replacementWarningSaysWhatIsLost(t *testing.T) {
	t.Parallel()
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	pvc := func(mode string) string {
		return fmt.Sprintf(`
resource "k8sconnect_object" "data" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data, namespace: %s}
    spec:
      accessModes: [%s]
      resources: {requests: {storage: 1Gi}}
  YAML
  %s
}
`, ns, mode, conn)
	}
	w := acctest.NewWorkdir(t)
	w.Write(pvc("ReadWriteOnce"))
	w.Cleanup()
	w.MustApply()
	w.Write(pvc("ReadWriteMany"))
	r := w.Plan()
	onlyWarning(t, r, "will be replaced", "What is lost", "data on the volume", "To keep it", "persistentVolumeReclaimPolicy")
	if add, _, remove := r.Changes(); add != 1 || remove != 1 {
		t.Fatalf("want a replacement, have +%d -%d", add, remove)
	}
}

// The update is bound to our UID by the API server itself: the object is
// deleted and re-created by someone else while the update's request is on its
// way (held by the fault proxy), and the server refuses the update.
func TestAccSafety_updateIsBoundToTheUID(t *testing.T) {
	e := newCrashEnv(t)
	e.mustSucceed(e.w.Apply(), "apply")
	ours := acctest.UID(t, configMaps, e.ns, e.name)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Delay, Delay: 4 * time.Second, Times: 1})
	e.write("two")
	done := make(chan acctest.Result, 1)
	go func() { done <- e.w.Apply() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	theirs := replaceAsSomeoneElse(t, e.ns, e.name)
	r := <-done
	e.w.MustFail(r, "update onto an object re-created during the request")
	if !r.HasError("no longer the object this resource created", ours) {
		t.Fatalf("the update's error does not say the object was replaced: %+v", r.Errors())
	}
	expectGreeting(t, e.ns, e.name, "theirs", theirs)
	// The name is someone else's now: the declaration goes, so the cleanup's
	// destroy does not plan a create onto their object.
	e.w.Write("")
}

// Fail closed: a create finds that the object appeared after the plan, and
// reading it to see whose it is fails. Nothing is written and nothing enters
// state.
func TestAccSafety_createFailsClosedWhenItCannotTellWhoseObjectItIs(t *testing.T) {
	e := newCrashEnv(t)
	delayed := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyMarked(), Action: faultproxy.Delay, Delay: 4 * time.Second, Times: 1})
	done := make(chan acctest.Result, 1)
	go func() { done <- e.w.Apply() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := delayed.WaitHits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	acctest.ApplyAs(t, "someone-else", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: theirs}\n", e.name, e.ns))
	theirs := acctest.UID(t, configMaps, e.ns, e.name)
	e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/configmaps/" + e.name}, Action: faultproxy.Drop})
	r := <-done
	e.w.MustFail(r, "create onto an object it cannot read")
	if !r.HasError("reading it to see whose it is failed", "nothing was changed") {
		t.Fatalf("the create's error does not say it could not tell whose object it is: %+v", r.Errors())
	}
	expectGreeting(t, e.ns, e.name, "theirs", theirs)
	e.proxy.Clear()
	e.expectState()
}

// replaceAsSomeoneElse deletes the ConfigMap and creates another of the same
// name under another manager; it returns the new UID.
func replaceAsSomeoneElse(t *testing.T, ns, name string) string {
	t.Helper()
	if err := acctest.Clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	acctest.ApplyAs(t, "someone-else", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: theirs}\n", name, ns))
	return acctest.UID(t, configMaps, ns, name)
}

// Discovery of the API groups fails (an aggregated API down, a proxy that
// drops /apis): refresh keeps every object in state and says why, instead of
// reading "kind not served" as "object gone".
func TestAccSafety_failedDiscoveryKeepsState(t *testing.T) {
	e := newCrashEnv(t)
	group := acctest.Name("disco") + ".example.com"
	conn := fmt.Sprintf("cluster_connection = {\n    host = %q\n    cluster_ca_certificate = %q\n    token = %q\n  }",
		e.proxy.URL, string(e.proxy.CAPEM), e.cluster.Token)
	e.w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "crd" {
  yaml_body = <<-YAML
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata: {name: probes.%[1]s}
    spec:
      group: %[1]s
      scope: Namespaced
      names: {plural: probes, singular: probe, kind: Probe}
      versions:
        - name: v1
          served: true
          storage: true
          schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  YAML
  %[2]s
}

resource "k8sconnect_object" "probe" {
  yaml_body = <<-YAML
    apiVersion: %[1]s/v1
    kind: Probe
    metadata: {name: p, namespace: %[3]s}
    spec: {interval: 10}
  YAML
  %[2]s
}
`, group, conn, e.ns))
	e.mustSucceed(e.w.Apply(), "apply")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/apis"}, Action: faultproxy.Drop})
	r := e.w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	acctest.ExpectActed(t, f)
	if got := e.w.StateList(); len(got) != 2 {
		t.Fatalf("a refresh with discovery failing dropped objects from state: %q\n%s", got, r.Output)
	}
	kept := 0
	for _, d := range r.Warnings() {
		if strings.Contains(d.Summary, "state kept") {
			kept++
		}
	}
	if kept != 2 {
		t.Fatalf("want a 'state kept' warning for each object, have %d: %+v\n%s", kept, r.Warnings(), r.Output)
	}
	f.Remove()
	e.w.MustPlanNoChanges()
}
