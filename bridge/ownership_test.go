package bridge_test

// Field ownership under Pulumi: provider/object's ownership scenarios 1 and 2
// (a co-owner changed a field we manage / applied the same value), run with
// the pulumi CLI on a YAML program of our own. The provider's warnings reach
// the user through `pulumi preview`; the preview needs --refresh, since
// without it Pulumi diffs against its last checkpoint and never sees the
// other manager's change (a preview without it still prints the provider's
// warning, but plans nothing, and a plain up reverts nothing). Run with: go test ./bridge -run TestPulumiOwnership -v

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/pulumitest"
	"github.com/k8sconnect/k8sconnect/provider/acctest"
	"github.com/k8sconnect/k8sconnect/provider/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/toolchain"
)

const ownStack = "ownership"

var ownDeployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// pulumiOwnership is one test's namespace and Pulumi project: one
// Deployment with three replicas.
type pulumiOwnership struct {
	t      *testing.T
	ns     string
	name   string
	dir    string
	env    []string
	pulumi string
}

func newPulumiOwnership(t *testing.T) *pulumiOwnership {
	if testing.Short() {
		t.Skip("builds the provider plugin and runs pulumi: not in -short")
	}
	t.Parallel()
	cluster := localcluster.Shared(t)
	e := &pulumiOwnership{
		t:    t,
		ns:   acctest.Namespace(t),
		name: acctest.Name("web"),
		dir:  t.TempDir(),
	}
	e.env = pulumitest.Environ(t, e.dir)
	pulumi, err := toolchain.Path("pulumi")
	if err != nil {
		t.Fatal(err)
	}
	e.pulumi = pulumi

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
	program := map[string]any{
		"name":    "k8sconnect-ownership",
		"runtime": "yaml",
		"resources": map[string]any{
			"web": map[string]any{
				"type": "k8sconnect:KubernetesObject",
				"properties": map[string]any{
					"clusterConnection": map[string]any{
						"host":                 cluster.Host,
						"clusterCaCertificate": string(cluster.CAPEM),
						"token":                map[string]any{"fn::secret": cluster.Token},
					},
					"yamlBody": body,
				},
			},
		},
	}
	b, err := yaml.Marshal(program)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "Pulumi.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := e.run("stack", "init", ownStack, "--non-interactive"); err != nil {
		t.Fatalf("pulumi stack init: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := e.run("destroy", "--yes", "--skip-preview", "--non-interactive", "--stack", ownStack); err != nil {
			t.Errorf("cleanup: pulumi destroy: %v\n%s", err, out)
		}
	})
	return e
}

func (e *pulumiOwnership) run(args ...string) (string, error) {
	cmd := exec.Command(e.pulumi, args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("pulumi %s: timed out", strings.Join(args, " "))
	}
}

// mustRun runs one operation on the stack, failing the test if it fails.
func (e *pulumiOwnership) mustRun(args ...string) string {
	e.t.Helper()
	begin := time.Now()
	out, err := e.run(append(args, "--non-interactive", "--stack", ownStack)...)
	e.t.Logf("pulumi %s: %v in %s", strings.Join(args, " "), err, time.Since(begin).Round(100*time.Millisecond))
	if err != nil {
		e.t.Fatalf("pulumi %s failed: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *pulumiOwnership) up() {
	e.t.Helper()
	e.mustRun("up", "--yes", "--skip-preview")
}

// previewRefresh runs `pulumi preview --refresh` and returns its output and
// the change summary of its event log.
func (e *pulumiOwnership) previewRefresh() (string, map[string]int) {
	e.t.Helper()
	return e.preview("--refresh")
}

// preview runs `pulumi preview` with args and returns its output and the
// change summary of its event log.
func (e *pulumiOwnership) preview(args ...string) (string, map[string]int) {
	e.t.Helper()
	events := filepath.Join(e.dir, fmt.Sprintf("events-%d.json", time.Now().UnixNano()))
	out := e.mustRun(append(append([]string{"preview"}, args...), "--diff", "--event-log", events)...)
	b, err := os.ReadFile(events)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev struct {
			SummaryEvent *struct {
				ResourceChanges map[string]int `json:"resourceChanges"`
			} `json:"summaryEvent"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.SummaryEvent != nil {
			changes := ev.SummaryEvent.ResourceChanges
			if changes == nil {
				changes = map[string]int{}
			}
			e.t.Logf("pulumi preview %s: %v", strings.Join(args, " "), changes)
			return out, changes
		}
	}
	e.t.Fatalf("no summary event in the preview's event log\n%s", out)
	return "", nil
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
	if t.Failed() {
		t.Fatalf("pulumi preview --refresh output:\n%s", out)
	}
	t.Logf("pulumi preview --refresh output:\n%s", out)

	// A plain up (no refresh) reverts the drift too.
	e.mustRun("up", "--yes", "--skip-preview")
	if got := e.replicas(); got != 3 {
		t.Fatalf("replicas after a plain pulumi up = %d, want 3 (the drift reverted)", got)
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
