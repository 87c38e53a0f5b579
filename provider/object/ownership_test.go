package object_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deploymentConfig(conn, ns, name, image string, replicas int, ignore string) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" "web" {
  yaml_body = <<-YAML
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: %[1]s
      namespace: %[2]s
    spec:
      replicas: %[3]d
      selector:
        matchLabels: {app: %[1]s}
      template:
        metadata:
          labels: {app: %[1]s}
        spec:
          containers:
            - name: app
              image: %[4]s
  YAML
  ignore_fields = [%[5]s]
  %[6]s
}
`, name, ns, replicas, image, ignore, conn)
}

func scaleAs(t *testing.T, manager, ns, name string, replicas int) {
	acctest.ApplyAs(t, manager, deployments, fmt.Sprintf(
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\nspec: {replicas: %d}\n", name, ns, replicas))
}

func replicasIn(t *testing.T, ns, name string) int64 {
	obj, err := acctest.Get(t, deployments, ns, name)
	if err != nil || obj == nil {
		t.Fatalf("Deployment %s/%s missing: %v", ns, name, err)
	}
	return obj.Object["spec"].(map[string]any)["replicas"].(int64)
}

func onlyWarning(t *testing.T, r acctest.Result, summary string, details ...string) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("command failed: %v\n%s", r.Err, r.Output)
	}
	ws := r.Warnings()
	if len(ws) != 1 || !strings.Contains(ws[0].Summary, summary) {
		t.Fatalf("want exactly one warning %q, got %d: %+v", summary, len(ws), ws)
	}
	for _, d := range details {
		if !strings.Contains(ws[0].Detail, d) {
			t.Errorf("warning detail lacks %q:\n%s", d, ws[0].Detail)
		}
	}
}

func noWarnings(t *testing.T, r acctest.Result) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("command failed: %v\n%s", r.Err, r.Output)
	}
	if ws := r.Warnings(); len(ws) != 0 {
		t.Fatalf("want no warnings, got %+v", ws)
	}
}

// Row 13, then the persistent-conflict wording on the next round.
func TestAccOwnership_driftRevertAndPersistentConflict(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("web"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 3, ""))
	w.MustApply()
	w.Cleanup()

	scaleAs(t, "horizontal-pod-autoscaler", ns, name, 5)
	onlyWarning(t, w.Plan(), "Drift: external changes will be reverted",
		"spec.replicas: 5 -> 3 (changed by horizontal-pod-autoscaler)", `add to ignore_fields: ["spec.replicas"]`)
	w.MustApply()
	if got := replicasIn(t, ns, name); got != 3 {
		t.Fatalf("replicas after apply = %d, want 3", got)
	}

	scaleAs(t, "horizontal-pod-autoscaler", ns, name, 6)
	onlyWarning(t, w.Plan(), "Persistent ownership conflict",
		"spec.replicas reverted from horizontal-pod-autoscaler on 2 consecutive applies")
}

// ADR 0008 (value-based): a co-owner applying the same value is not a change.
func TestAccOwnership_sameValueCoOwnerIsSilent(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("web"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 3, ""))
	w.MustApply()
	w.Cleanup()

	scaleAs(t, "horizontal-pod-autoscaler", ns, name, 3)
	r := w.Plan()
	noWarnings(t, r)
	if add, change, remove := r.Changes(); add+change+remove != 0 {
		t.Fatalf("plan is not empty (%d to add, %d to change, %d to destroy):\n%s", add, change, remove, r.Output)
	}
}

// Row 7: taking back a field from ignore_fields while its manager holds another value.
func TestAccOwnership_takingFromActiveManager(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("web"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 3, `"spec.replicas"`))
	w.MustApply()
	w.Cleanup()

	scaleAs(t, "horizontal-pod-autoscaler", ns, name, 8)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.27", 3, ""))
	onlyWarning(t, w.Plan(), "taking fields from an active manager",
		"spec.replicas: 8 -> 3 (changed by horizontal-pod-autoscaler)")
}

// Row 15: the user and kubectl both changed the image.
func TestAccOwnership_updateWhileSomeoneElseChangedIt(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("web"), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.19", 2, ""))
	w.MustApply()
	w.Cleanup()

	acctest.PatchAs(t, "kubectl-edit", deployments, ns, name,
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.18"}]}}}}`)
	w.Write(deploymentConfig(conn, ns, name, "nginx:1.20", 2, ""))
	onlyWarning(t, w.Plan(), "overwriting concurrent external changes",
		"spec.template.spec.containers[name=app].image: nginx:1.18 -> nginx:1.20 (last applied nginx:1.19; they set nginx:1.18 (changed by kubectl-edit))")
}

// Several fields in several rows: one warning per conflict kind, no per-field spam.
func TestAccOwnership_multiFieldAggregation(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	cfg := func(a, b, c, d string, ignore ...string) string {
		return configMapWithKeys(conn, ns, name, map[string]string{"a": a, "b": b, "c": c, "d": d}, ignore...)
	}
	w := acctest.NewWorkdir(t)
	w.Write(cfg("1", "1", "1", "1", "data.c"))
	w.MustApply()
	w.Cleanup()

	// a: drifted (row 13); b: changed by both (row 15); c: taken back from
	// ignore_fields while another manager changed it (row 7); d: changed by the
	// user only (row 14, silent).
	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name, `{"data":{"a":"2","b":"2"}}`)
	acctest.ApplyAs(t, "config-operator", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {c: \"9\"}\n", name, ns))
	w.Write(cfg("1", "3", "1", "4"))
	r := w.Plan()
	if r.Err != nil {
		t.Fatalf("plan failed: %v\n%s", r.Err, r.Output)
	}
	got := map[string]string{}
	for _, d := range r.Warnings() {
		got[d.Summary] = d.Detail
	}
	want := map[string]string{
		"Drift: external changes will be reverted":                    "data.a: 2 -> 1",
		"Ownership conflict: overwriting concurrent external changes": "data.b: 2 -> 3",
		"Ownership conflict: taking fields from an active manager":    "data.c: 9 -> 1",
	}
	if len(got) != len(want) || len(r.Warnings()) != len(want) {
		t.Fatalf("want %d warnings, got %d: %+v", len(want), len(r.Warnings()), r.Warnings())
	}
	for summary, line := range want {
		if !strings.Contains(got[summary], line) {
			t.Errorf("warning %q lacks %q:\n%s", summary, line, got[summary])
		}
		if strings.Contains(got[summary], "data.d") {
			t.Errorf("warning %q mentions the silent field data.d", summary)
		}
	}
}

// ownership_messages = "none" silences the warning; "full" adds the notes for
// fields taken or released.
func TestAccOwnership_verbositySetting(t *testing.T) {
	t.Parallel()
	ns, name, conn := acctest.Namespace(t), acctest.Name("cm"), acctest.Connection(t)
	cfg := func(verbosity string, ignore ...string) string {
		return fmt.Sprintf("provider \"k8sconnect\" {\n  ownership_messages = %q\n}\n", verbosity) +
			configMapWithKeys(conn, ns, name, map[string]string{"a": "1", "b": "1"}, ignore...)
	}
	w := acctest.NewWorkdir(t)
	w.Write(cfg("none"))
	w.MustApply()
	w.Cleanup()

	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name, `{"data":{"a":"2"}}`)
	r := w.Plan()
	noWarnings(t, r)
	if _, change, _ := r.Changes(); change != 1 {
		t.Fatalf("with ownership_messages = none the drift must still be planned; changes = %d", change)
	}

	w.Write(cfg("full", "data.b"))
	r = w.Plan()
	if r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	summaries := map[string]bool{}
	for _, d := range r.Warnings() {
		summaries[d.Summary] = true
	}
	if !summaries["Drift: external changes will be reverted"] || !summaries["Note: ConfigMap "+ns+"/"+name+": k8sconnect releases data.b"] {
		t.Fatalf("ownership_messages = full: want the drift warning and the release note, got %+v", r.Warnings())
	}

	w.Write(cfg("loud"))
	if r := w.Plan(); r.Err == nil || !strings.Contains(r.Output, `ownership_messages must be`) {
		t.Fatalf("an invalid ownership_messages must fail the plan:\n%s", r.Output)
	}
	w.Write(cfg("conflicts"))
}
