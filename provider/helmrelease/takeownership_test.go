package helmrelease_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// countedConfig is a release of the counted chart (three ConfigMaps) with
// more arguments.
func countedConfig(t *testing.T, ns, name, more string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  set       = [{ name = "greeting", value = "from the chart" }]
  %s
  %s
}
`, name, ns, chartPath(t, "counted"), acctest.Connection(t), more)
}

// managersOf are the field managers that own a field of the ConfigMap's data
// key.
func managersOf(t *testing.T, ns, name, key string) []string {
	t.Helper()
	var out []string
	for _, e := range acctest.MustGet(t, configMaps, ns, name).GetManagedFields() {
		if e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), `"f:`+key+`"`) {
			out = append(out, e.Manager)
		}
	}
	slices.Sort(out)
	return out
}

// take_ownership adopts objects that exist and are not the release's, as
// helm --take-ownership does: one made with kubectl and one another Helm
// release holds are each warned about at plan, naming who holds it, then
// updated in place (same UID) with the chart's fields and this release's
// marks, the chart's fields handed to k8sconnect (kubectl's own field stays
// kubectl's), and the next plan is quiet. One a k8sconnect resource manages
// is refused all the same, and without take_ownership all are refused, as
// before.
func TestAccHelmReleaseTakeOwnership(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "adopter"
	acctest.ApplyAs(t, "kubectl", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n"+
		"metadata: {name: %s-greeting, namespace: %s}\ndata: {greeting: mine, kept: by-kubectl}\n", name, ns))
	acctest.ApplyAs(t, "helm", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n"+
		"metadata: {name: %s-steady, namespace: %s, annotations: {meta.helm.sh/release-name: other, "+
		"meta.helm.sh/release-namespace: %s}, labels: {app.kubernetes.io/managed-by: Helm}}\ndata: {note: steady}\n", name, ns, ns))
	acctest.ApplyAs(t, "k8sconnect", configMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n"+
		"metadata: {name: %s-revision, namespace: %s, annotations: {k8sconnect.io/owned-by: elsewhere}}\ndata: {revision: none}\n", name, ns))
	greetingUID := acctest.UID(t, configMaps, ns, name+"-greeting")
	steadyUID := acctest.UID(t, configMaps, ns, name+"-steady")

	w := acctest.NewWorkdir(t)
	w.Write(countedConfig(t, ns, name, ""))
	w.Cleanup()
	r := w.Plan()
	if r.Err == nil || !r.HasError("belongs to no Helm release (made by kubectl)") || !r.HasError("belongs to Helm release "+ns+"/other") {
		t.Fatalf("without take_ownership the plan should refuse both, naming their holders: %v\n%s", r.Err, r.Output)
	}

	w.Write(countedConfig(t, ns, name, "take_ownership = true"))
	r = w.Plan()
	if r.Err == nil || !r.HasError("the k8sconnect resource elsewhere", "take_ownership cannot hand them over") {
		t.Fatalf("take_ownership should still refuse an object a k8sconnect resource manages: %v\n%s", r.Err, r.Output)
	}
	if err := acctest.Dynamic(t).Resource(configMaps).Namespace(ns).Delete(context.Background(), name+"-revision", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan under take_ownership: %v\n%s", r.Err, r.Output)
	}
	ws := warningsNamed(r, "Taking ownership of an object")
	var details []string
	for _, d := range ws {
		details = append(details, d.Detail)
	}
	all := strings.Join(details, "\n")
	if len(ws) != 2 || !strings.Contains(all, "core/ConfigMap/"+ns+"/"+name+"-greeting exists already and belongs to no Helm release (made by kubectl)") ||
		!strings.Contains(all, "core/ConfigMap/"+ns+"/"+name+"-steady exists already and belongs to Helm release "+ns+"/other") {
		t.Errorf("the plan should warn once per adopted object, naming its holder; warns %v", r.Warnings())
	}
	w.MustApply()
	if got := acctest.UID(t, configMaps, ns, name+"-greeting"); got != greetingUID {
		t.Errorf("the kubectl ConfigMap was recreated: UID %s -> %s", greetingUID, got)
	}
	if got := acctest.UID(t, configMaps, ns, name+"-steady"); got != steadyUID {
		t.Errorf("the other release's ConfigMap was recreated: UID %s -> %s", steadyUID, got)
	}
	if err := configMapData(t, ns, name+"-greeting", "greeting", "from the chart")(); err != nil {
		t.Error(err)
	}
	if err := configMapData(t, ns, name+"-greeting", "kept", "by-kubectl")(); err != nil {
		t.Errorf("kubectl's own field should stay: %v", err)
	}
	if got := managersOf(t, ns, name+"-greeting", "greeting"); !slices.Equal(got, []string{"k8sconnect"}) {
		t.Errorf("data.greeting should be k8sconnect's alone, managers %v", got)
	}
	if got := managersOf(t, ns, name+"-greeting", "kept"); !slices.Equal(got, []string{"kubectl"}) {
		t.Errorf("data.kept should stay kubectl's, managers %v", got)
	}
	steady := acctest.MustGet(t, configMaps, ns, name+"-steady")
	if got := steady.GetAnnotations()["meta.helm.sh/release-name"]; got != name {
		t.Errorf("the adopted ConfigMap should carry this release's name, has %q", got)
	}
	// The other release set it to the chart's value: without the hand-over
	// both would hold it.
	if got := managersOf(t, ns, name+"-steady", "note"); !slices.Equal(got, []string{"k8sconnect"}) {
		t.Errorf("data.note should be k8sconnect's alone, managers %v", got)
	}
	if got, _, _ := unstructured.NestedString(steady.Object, "data", "note"); got != "steady" {
		t.Errorf("data.note should be the chart's, is %q", got)
	}
	expectQuietPlan(t, w, "after the adoption")
}
