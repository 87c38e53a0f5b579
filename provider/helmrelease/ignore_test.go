package helmrelease_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// replicasOf is a Deployment's spec.replicas, and whether k8sconnect's field
// manager owns it.
func replicasOf(t *testing.T, ns, name string) (int64, bool) {
	t.Helper()
	obj := acctest.MustGet(t, deployments, ns, name)
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	owned := false
	for _, e := range obj.GetManagedFields() {
		if e.Manager == "k8sconnect" && e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:replicas"`) {
			owned = true
		}
	}
	return n, owned
}

// An HPA scales a Deployment of the release: without ignore_fields that is
// drift the next apply would undo, the fight users know. Listing
// spec.replicas for every Deployment of the release (a key pattern) hands
// the field over with the HPA's value, not reset, and k8sconnect no longer
// owns it; a later scaling plans no change. A key that is no object key, or
// a field that identifies the object, fails the plan with nothing applied;
// a key that matches no object is warned about.
func TestAccHelmReleaseIgnoreFields(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "scaled"
	app := name + "-app"
	w := acctest.NewWorkdir(t)
	w.Write(releaseConfig(t, ns, name, ""))
	w.Cleanup()
	w.MustApply()
	if n, owned := replicasOf(t, ns, app); n != 1 || !owned {
		t.Fatalf("after install: replicas %d, owned by k8sconnect %v; want 1, true", n, owned)
	}

	acctest.PatchAs(t, "horizontal-pod-autoscaler", deployments, ns, app, `{"spec":{"replicas":3}}`)
	r := w.Plan()
	if add, change, remove := r.Changes(); r.Err != nil || add+change+remove == 0 {
		t.Fatalf("the HPA's scaling should be drift while k8sconnect owns spec.replicas (err %v):\n%s", r.Err, r.Output)
	}

	ignoring := func(ignore string) string {
		return releaseConfig(t, ns, name, "ignore_fields = "+ignore)
	}
	// data.greeting k8sconnect still owns alone: without the hand-over,
	// Server-Side Apply would delete it when the apply leaves it out.
	both := `{
    "apps/Deployment/*/*"              = ["spec.replicas"]
    "core/ConfigMap/*/scaled-settings" = ["data.greeting"]
  }`
	w.Write(ignoring(both))
	w.MustApply()
	if n, owned := replicasOf(t, ns, app); n != 3 || owned {
		t.Errorf("after ignoring spec.replicas: replicas %d, owned by k8sconnect %v; want the HPA's 3, not owned", n, owned)
	}
	if err := configMapData(t, ns, name+"-settings", "greeting", "hello")(); err != nil {
		t.Errorf("a newly ignored field k8sconnect owned alone should keep its value: %v", err)
	}
	if objects := w.StateAttribute("k8sconnect_helm_release.app", "objects"); strings.Contains(objects, "spec.replicas") ||
		strings.Contains(objects, "data.greeting") {
		t.Errorf("an ignored field is still in objects: %s", objects)
	}
	acctest.PatchAs(t, "horizontal-pod-autoscaler", deployments, ns, app, `{"spec":{"replicas":5}}`)
	w.MustPlanNoChanges()

	for ignore, want := range map[string]string{
		`{ "Deployment/scaled-app" = ["spec.replicas"] }`:                                           "is not an object key",
		`{ "apps/Deployment/*/*" = ["metadata.name"] }`:                                             "identifies the object",
		`{ "apps/Deployment/*/*" = ["spec.template[0"] }`:                                           "Invalid ignore_fields entry",
		`{ "apps/Deployment/[/*" = ["spec.replicas"] }`:                                             "is not a valid pattern",
		`{ "apps/Deployment/*/*" = ["spec.replicas"], "apps/StatefulSet/*/*" = ["spec.replicas"] }`: "",
	} {
		w.Write(ignoring(ignore))
		r := w.Plan()
		if want == "" {
			if r.Err != nil || len(r.Warnings()) == 0 || !strings.Contains(fmt.Sprint(r.Warnings()), "matches no object") {
				t.Errorf("%s: want a plan that warns the StatefulSet key matches no object (err %v):\n%s", ignore, r.Err, r.Output)
			}
			continue
		}
		if r.Err == nil || !r.HasError(want) {
			t.Errorf("%s: want a failed plan saying %q:\n%s", ignore, want, r.Output)
		}
	}
	if n, _ := replicasOf(t, ns, app); n != 5 {
		t.Errorf("a failed plan changed the Deployment: replicas %d, want 5", n)
	}
	w.Write(ignoring(both))
}
