package bridge_test

// Field ownership under Pulumi: provider/object's ownership scenarios 1 and 2
// (a co-owner changed a field we manage / applied the same value), run with
// the pulumi CLI on a YAML program of our own. The provider's warnings reach
// the user through `pulumi preview`. Without --refresh Pulumi diffs against
// its last checkpoint, so the provider's plan reads the live object itself:
// a plain preview still warns and plans the revert, and a plain up reverts.
// Run with: go test ./bridge -run TestPulumiOwnership -v

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var ownDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// pulumiOwnership is one test's namespace and Pulumi stack: one Deployment
// with three replicas.
type pulumiOwnership struct {
	t     *testing.T
	ns    string
	name  string
	stack *pulumitest.Stack
}

func newPulumiOwnership(t *testing.T) *pulumiOwnership {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	e := &pulumiOwnership{t: t, ns: acctest.Namespace(t), name: acctest.Name("web")}
	body := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  replicas: 3
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
        - name: app
          image: nginx:1.27
`, e.name, e.ns)
	program, err := yaml.Marshal(map[string]any{
		"name":    "k8sconnect-ownership",
		"runtime": "yaml",
		"resources": map[string]any{
			"web": map[string]any{
				"type": "k8sconnect:KubernetesObject",
				"properties": map[string]any{
					"clusterConnection": yamlConnection(cluster.Host, cluster.CAPEM, cluster.Token),
					"yamlBody":          body,
				},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.stack = pulumitest.NewYAMLProgram(t, string(program))
	return e
}

func (e *pulumiOwnership) up() {
	e.t.Helper()
	e.stack.Run(pulumitest.Up, nil)
}

// preview runs `pulumi preview` (with --refresh when asked) and returns its
// output and change summary.
func (e *pulumiOwnership) preview(flags ...pulumitest.Flag) (string, map[string]int) {
	e.t.Helper()
	res := e.stack.Run(pulumitest.Preview, nil, flags...)
	return res.Log, res.Changes
}

func (e *pulumiOwnership) previewRefresh() (string, map[string]int) {
	e.t.Helper()
	return e.preview(pulumitest.RefreshFirst)
}

func (e *pulumiOwnership) scaleAs(manager string, replicas int) {
	e.t.Helper()
	acctest.ApplyAs(e.t, manager, ownDeployments, fmt.Sprintf(
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\nspec: {replicas: %d}\n", e.name, e.ns, replicas))
}

func (e *pulumiOwnership) replicas() int64 {
	e.t.Helper()
	obj, err := acctest.Get(e.t, ownDeployments, e.ns, e.name)
	if err != nil || obj == nil {
		e.t.Fatalf("Deployment %s/%s missing: %v", e.ns, e.name, err)
	}
	n, _ := obj.Object["spec"].(map[string]any)["replicas"].(int64)
	return n
}

// flat joins the output's whitespace runs, so that wrapped lines still match.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// Scenario 2 (row 13): another manager changed a field we manage; the preview
// warns that the change will be reverted, and up reverts it.
func TestPulumiOwnership_driftWarningInPreview(t *testing.T) {
	e := newPulumiOwnership(t)
	e.up()
	if got := e.replicas(); got != 3 {
		t.Fatalf("replicas after the first up = %d, want 3", got)
	}

	e.scaleAs("horizontal-pod-autoscaler", 5)
	// Without --refresh Pulumi diffs against its checkpoint, which still says
	// 3; the provider's plan reads the live object, so it both warns and
	// plans the update that keeps the warning's promise.
	plain, plainChanges := e.preview()
	if !strings.Contains(flat(plain), "spec.replicas: 5 -> 3 (changed by horizontal-pod-autoscaler)") || plainChanges["update"] != 1 {
		t.Errorf("pulumi preview without --refresh: want the drift warning and one update, have %v:\n%s", plainChanges, plain)
	}

	out, changes := e.previewRefresh()
	for _, want := range []string{
		"Drift: external changes will be reverted",
		"spec.replicas: 5 -> 3 (changed by horizontal-pod-autoscaler)",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("pulumi preview --refresh lacks %q", want)
		}
	}
	if changes["update"] != 1 {
		t.Errorf("pulumi preview --refresh: want one update, have %v", changes)
	}
	// Said once per preview, in Pulumi's names: the engine plans a resource
	// more than once, the user hears it once; and a Pulumi user writes
	// ignoreFields, not ignore_fields.
	for name, log := range map[string]string{"preview": plain, "preview --refresh": out} {
		if n := strings.Count(log, "Drift: external changes will be reverted"); n != 1 {
			t.Errorf("pulumi %s shows the drift warning %d times, want once", name, n)
		}
		if strings.Contains(log, "ignore_fields") || !strings.Contains(log, "add to ignoreFields") {
			t.Errorf("pulumi %s does not name the property ignoreFields as a Pulumi program spells it", name)
		}
	}
	if t.Failed() {
		t.Fatalf("pulumi preview --refresh output:\n%s", out)
	}
	t.Logf("pulumi preview --refresh output:\n%s", out)

	// A plain up (no refresh) reverts the drift too.
	e.up()
	if got := e.replicas(); got != 3 {
		t.Fatalf("replicas after a plain pulumi up = %d, want 3 (the drift reverted)", got)
	}
}

// A fight is counted across ups: the plan that each up applies records how
// often the field was reverted from the same manager, so the second revert is
// called a persistent conflict. Pulumi plans an update twice in one process
// (its Diff, then the Update's own plan), and the second plan works from what
// the first read; the count must survive that.
func TestPulumiOwnership_persistentConflictCountedAcrossUps(t *testing.T) {
	e := newPulumiOwnership(t)
	e.up()
	e.scaleAs("horizontal-pod-autoscaler", 5)
	e.up()
	if got := e.replicas(); got != 3 {
		t.Fatalf("replicas after the up that reverted the first change = %d, want 3", got)
	}
	e.scaleAs("horizontal-pod-autoscaler", 6)
	out, changes := e.preview()
	for _, want := range []string{
		"Persistent ownership conflict",
		"spec.replicas reverted from horizontal-pod-autoscaler on 2 consecutive applies",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("pulumi preview lacks %q", want)
		}
	}
	if changes["update"] != 1 {
		t.Errorf("pulumi preview: want one update, have %v", changes)
	}
	if t.Failed() {
		t.Fatalf("pulumi preview output:\n%s", out)
	}
}

// Scenario 1: a co-owner applying the same value is not a change: no
// warning, nothing to update.
func TestPulumiOwnership_sameValueCoOwnerIsSilent(t *testing.T) {
	e := newPulumiOwnership(t)
	e.up()

	e.scaleAs("horizontal-pod-autoscaler", 3)
	out, changes := e.previewRefresh()
	for _, unwanted := range []string{"Drift", "Ownership conflict"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("pulumi preview --refresh mentions %q", unwanted)
		}
	}
	for _, op := range []string{"create", "update", "replace", "delete", "create-replacement", "delete-replaced"} {
		if changes[op] != 0 {
			t.Errorf("pulumi preview --refresh: want no %s, have %v", op, changes)
		}
	}
	if t.Failed() {
		t.Fatalf("pulumi preview --refresh output:\n%s", out)
	}
	if got := e.replicas(); got != 3 {
		t.Fatalf("replicas = %d, want 3", got)
	}
}
