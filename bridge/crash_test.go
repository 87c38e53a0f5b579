package bridge_test

// Crash safety under Pulumi (docs/adr/0001-crash-safe-create.md), proven
// against the real API server through internal/testing/faultproxy, with a YAML
// program run by the pulumi CLI: the same cases as provider/object's
// crash_test.go. Each checks the failed run's exit code, the object's UID
// across the recovering run, exactly one KubernetesObject in
// `pulumi stack export`, no leftover objects in the namespace and a preview
// with nothing to do.
//
// The Pulumi bridge records nothing when Create fails (pulumi/pulumi-terraform-bridge#1495), so these runs prove that the object, not the state, carries
// the recovery. Run with: go test ./bridge -run TestPulumiCrash -v

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

const (
	crashObjectTyp = "k8sconnect:index/kubernetesObject:KubernetesObject"
	crashStack     = "crash"
)

// pulumiCrash is one test's namespace, proxy and Pulumi project.
type pulumiCrash struct {
	t       *testing.T
	ns      string
	name    string
	proxy   *faultproxy.Proxy
	obj     acctest.CrashObject // the ConfigMap, and its checks in the cluster
	cluster *localcluster.Cluster
	dir     string
	env     []string
	pulumi  string
}

func newPulumiCrash(t *testing.T) *pulumiCrash {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	pulumi, err := toolchain.Path("pulumi")
	if err != nil {
		t.Fatal(err)
	}
	e := &pulumiCrash{
		t:       t,
		ns:      acctest.Namespace(t),
		name:    acctest.Name("crash"),
		proxy:   faultproxy.New(t, cluster.Host, cluster.CAPEM),
		cluster: cluster,
		dir:     t.TempDir(),
		pulumi:  pulumi,
	}
	e.obj = acctest.CrashObject{T: t, Namespace: e.ns, Name: e.name}
	// The plugin from this checkout and the pulumi CLI, built once per test
	// binary; the programs here are our own.
	// A killed create's marker protects its object for this long; the
	// default (60 s) would only slow the re-runs down.
	e.env = append(pulumitest.Environ(t, e.dir), "K8SCONNECT_CREATE_PENDING_LEASE=3s")
	e.write("one")
	if r := e.run("stack", "init", crashStack, "--non-interactive"); r.err != nil {
		t.Fatalf("pulumi stack init: %v\n%s", r.err, r.out)
	}
	t.Cleanup(func() {
		e.proxy.Clear()
		if res, _ := e.export(); len(res) > 0 {
			_ = e.run("cancel", "--yes", "--stack", crashStack) // a lock left by a killed run
			if r := e.run("destroy", "--yes", "--skip-preview", "--non-interactive", "--stack", crashStack); r.err != nil {
				t.Errorf("cleanup: pulumi destroy: %v\n%s", r.err, r.out)
			}
		}
		if t.Failed() {
			for _, r := range e.proxy.Requests() {
				t.Logf("proxy: %s", r)
			}
		}
	})
	return e
}

// write makes the program: one ConfigMap, reached through the proxy.
func (e *pulumiCrash) write(greeting string) {
	e.t.Helper()
	body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  greeting: %s\n", e.name, e.ns, greeting)
	e.writeProgram(map[string]any{"cm": map[string]any{
		"type": "k8sconnect:KubernetesObject",
		"properties": map[string]any{
			"clusterConnection": yamlConnection(e.proxy.URL, e.proxy.CAPEM, e.cluster.Token),
			"yamlBody":          body,
		},
	}})
}

// writePatch makes the program one k8sconnect Patch of the ConfigMap, which
// it first creates as Helm would, and returns that target.
func (e *pulumiCrash) writePatch() *unstructured.Unstructured {
	e.t.Helper()
	target := acctest.ApplyAs(e.t, "helm", objConfigMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello, owner: helm}\n", e.name, e.ns))
	e.writeProgram(map[string]any{"greeting": map[string]any{
		"type": "k8sconnect:Patch",
		"properties": map[string]any{
			"target":            map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": e.ns, "name": e.name},
			"patch":             "data: {greeting: patched}",
			"takeOwnership":     true,
			"clusterConnection": yamlConnection(e.proxy.URL, e.proxy.CAPEM, e.cluster.Token),
		},
	}})
	return target
}

func (e *pulumiCrash) writeProgram(resources map[string]any) {
	e.t.Helper()
	b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-crash", "runtime": "yaml", "resources": resources})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "Pulumi.yaml"), b, 0o600); err != nil {
		e.t.Fatal(err)
	}
}

type pulumiResult struct {
	out string
	err error
}

func (e *pulumiCrash) command(args ...string) *exec.Cmd {
	cmd := exec.Command(e.pulumi, args...)
	cmd.Dir, cmd.Env = e.dir, e.env
	return cmd
}

func (e *pulumiCrash) run(args ...string) pulumiResult {
	cmd := e.command(args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	faultproxy.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		return pulumiResult{err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return pulumiResult{out: out.String(), err: err}
	case <-time.After(10 * time.Minute):
		_, _ = faultproxy.KillTree(cmd.Process.Pid)
		killed := <-done
		return pulumiResult{out: out.String(), err: fmt.Errorf("pulumi %s: timed out (%v)", strings.Join(args, " "), killed)}
	}
}

// timed runs one operation and logs how long it took.
func (e *pulumiCrash) timed(what string, args ...string) pulumiResult {
	e.t.Helper()
	begin := time.Now()
	r := e.run(append(args, "--non-interactive", "--stack", crashStack)...)
	e.t.Logf("pulumi %s: %v in %s", what, r.err, time.Since(begin).Round(100*time.Millisecond))
	return r
}

func (e *pulumiCrash) up(what string) pulumiResult {
	e.t.Helper()
	return e.timed("up ("+what+")", "up", "--yes", "--skip-preview")
}

func (e *pulumiCrash) destroy(what string) pulumiResult {
	e.t.Helper()
	return e.timed("destroy ("+what+")", "destroy", "--yes", "--skip-preview")
}

func (e *pulumiCrash) mustFail(r pulumiResult, what string) {
	e.t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.err, &exit) || exit.ExitCode() == 0 {
		e.t.Fatalf("pulumi %s: want a failed run with a non-zero exit code, got %v\n%s", what, r.err, r.out)
	}
	e.t.Logf("pulumi %s failed as it should: exit code %d", what, exit.ExitCode())
}

func (e *pulumiCrash) mustSucceed(r pulumiResult, what string) {
	e.t.Helper()
	if r.err != nil {
		e.t.Fatalf("pulumi %s failed: %v\n%s", what, r.err, r.out)
	}
}

// stateResource is a resource of `pulumi stack export`.
type stateResource struct {
	URN     string         `json:"urn"`
	Type    string         `json:"type"`
	Inputs  map[string]any `json:"inputs"`
	Outputs map[string]any `json:"outputs"`
}

// export is the stack's deployment: its resources and pending operations.
func (e *pulumiCrash) export() (resources []stateResource, pending []string) {
	e.t.Helper()
	r := e.run("stack", "export", "--stack", crashStack)
	if r.err != nil {
		e.t.Fatalf("pulumi stack export: %v\n%s", r.err, r.out)
	}
	var d struct {
		Deployment struct {
			Resources         []stateResource `json:"resources"`
			PendingOperations []struct {
				Type     string        `json:"type"`
				Resource stateResource `json:"resource"`
			} `json:"pending_operations"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(r.out), &d); err != nil {
		e.t.Fatalf("pulumi stack export: %v\n%s", err, r.out)
	}
	for _, op := range d.Deployment.PendingOperations {
		pending = append(pending, op.Type+" "+op.Resource.URN)
	}
	return d.Deployment.Resources, pending
}

// objectsInState are the KubernetesObjects in the stack's state.
func (e *pulumiCrash) objectsInState() []stateResource {
	e.t.Helper()
	res, _ := e.export()
	var out []stateResource
	for _, r := range res {
		if r.Type == crashObjectTyp {
			out = append(out, r)
		}
	}
	return out
}

func (e *pulumiCrash) expectInState(n int) []stateResource {
	e.t.Helper()
	got := e.objectsInState()
	if len(got) != n {
		var urns []string
		for _, r := range got {
			urns = append(urns, r.URN)
		}
		e.t.Fatalf("want %d KubernetesObject in the stack's state, have %d: %v", n, len(got), urns)
	}
	return got
}

// stateGreeting is the greeting in the state's yamlBody input.
func (e *pulumiCrash) stateGreeting() string {
	e.t.Helper()
	res := e.expectInState(1)
	body, _ := res[0].Inputs["yamlBody"].(string)
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "greeting: "); ok {
			return v
		}
	}
	e.t.Fatalf("no greeting in the state's yamlBody %q", body)
	return ""
}

// preview returns the change summary of `pulumi preview`.
func (e *pulumiCrash) preview() map[string]int {
	e.t.Helper()
	r := e.run("preview", "--json", "--non-interactive", "--stack", crashStack)
	if r.err != nil {
		e.t.Fatalf("pulumi preview: %v\n%s", r.err, r.out)
	}
	var p struct {
		ChangeSummary map[string]int `json:"changeSummary"`
	}
	out := r.out
	if i := strings.Index(out, "{"); i > 0 {
		out = out[i:]
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		e.t.Fatalf("pulumi preview --json: %v\n%s", err, r.out)
	}
	return p.ChangeSummary
}

// expectPreview checks the preview's summary; absent operations count zero.
func (e *pulumiCrash) expectPreview(want map[string]int) {
	e.t.Helper()
	got := e.preview()
	for op, n := range got {
		if n != want[op] {
			e.t.Fatalf("pulumi preview: want %v, have %v", want, got)
		}
	}
	for op, n := range want {
		if got[op] != n {
			e.t.Fatalf("pulumi preview: want %v, have %v", want, got)
		}
	}
}

// expectConverged checks the end of a recovering run: exactly one object,
// with uid (when given), the greeting, our owner id and no marker; exactly
// one KubernetesObject in state, recording that greeting; a preview with
// nothing to do.
func (e *pulumiCrash) expectConverged(uid, greeting string) string {
	e.t.Helper()
	uid = e.obj.ExpectConverged(uid, greeting)
	if g := e.stateGreeting(); g != greeting {
		e.t.Fatalf("the stack's state has greeting %q, want %q", g, greeting)
	}
	owner := e.obj.OwnerID()
	if res := e.expectInState(1); res[0].Outputs["id"] != owner {
		e.t.Fatalf("the state's id %v is not the object's owner id %s", res[0].Outputs["id"], owner)
	}
	e.expectPreview(map[string]int{"same": 2}) // the stack and the object
	return uid
}

// 1. The connection fails before the apply reaches the server.
func TestPulumiCrash_createDroppedBeforeTheServer(t *testing.T) {
	e := newPulumiCrash(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Drop})
	e.mustFail(e.up("every apply dropped"), "up")
	acctest.ExpectActed(e.t, f)
	e.obj.ExpectNoObjects()
	e.expectInState(0)

	f.Remove()
	e.mustSucceed(e.up("recovering"), "up")
	e.expectConverged("", "one")
}

// 2. The server applies the object, the response is lost (every time).
func TestPulumiCrash_createResponseLost(t *testing.T) {
	e := newPulumiCrash(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Cut})
	e.mustFail(e.up("every apply's response cut"), "up")
	acctest.ExpectActed(e.t, f)
	uid := e.obj.ExpectOrphan()
	e.expectInState(0)

	f.Remove()
	e.mustSucceed(e.up("recovering"), "up")
	e.expectConverged(uid, "one")
}

// 3. The first step (with the marker) succeeds, the second never gets through.
func TestPulumiCrash_createSecondStepFails(t *testing.T) {
	e := newPulumiCrash(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Drop})
	e.mustFail(e.up("second step dropped"), "up")
	acctest.ExpectActed(e.t, f)
	uid := e.obj.ExpectOrphan()
	e.expectInState(0)

	f.Remove()
	e.mustSucceed(e.up("recovering"), "up")
	e.expectConverged(uid, "one")
}

// 3b. The second step lands but its response is lost for longer than the
// retry window: the run reads the object once more, finds our id, no marker
// and the first step's UID, and succeeds, with no import.
func TestPulumiCrash_createSecondStepResponseLost(t *testing.T) {
	e := newPulumiCrash(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyUnmarked(), Action: faultproxy.Cut})
	e.mustSucceed(e.up("second step's response cut"), "up")
	acctest.ExpectActed(e.t, f)
	f.Remove()
	e.expectConverged("", "one")
}

// 4. pulumi, its language host and the provider plugin are killed (SIGKILL)
// while the first step's response is held. The killed run leaves the stack
// locked (Pulumi's own file lock) and a pending create in the checkpoint;
// `pulumi cancel` (what the lock error tells the user to run) unlocks it, the
// next `pulumi up` adopts the object, and `pulumi refresh
// --clear-pending-creates` clears the stale pending create.
func TestPulumiCrash_createKilledAfterTheApply(t *testing.T) {
	e := newPulumiCrash(t)
	f := e.proxy.Inject(faultproxy.Rule{Match: e.obj.ApplyMarked(), Action: faultproxy.Pause, Times: 1})
	e.killWhileHeld(f)

	uid := e.obj.ExpectOrphan()
	e.expectInState(0)
	_, pending := e.export()
	t.Logf("pending operations after the kill: %v", pending)

	e.mustSucceed(e.upAfterKill(), "up")
	e.expectConverged(uid, "one")
	// Pulumi keeps the killed run's pending create in the checkpoint (and
	// warns about it on every up) until a refresh clears it.
	if _, pending := e.export(); len(pending) > 0 {
		t.Logf("pending operations after the recovering run (Pulumi's own bookkeeping): %v", pending)
		e.mustSucceed(e.timed("refresh --clear-pending-creates", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"), "refresh")
		if _, pending := e.export(); len(pending) > 0 {
			t.Fatalf("pending operations after refresh --clear-pending-creates: %v", pending)
		}
		e.expectConverged(uid, "one")
	}
}

// killWhileHeld starts `pulumi up` and kills pulumi, its language host and the
// provider plugin (SIGKILL) once f (a Pause rule) holds a response.
func (e *pulumiCrash) killWhileHeld(f *faultproxy.Fault) {
	e.t.Helper()
	cmd := e.command("up", "--yes", "--skip-preview", "--non-interactive", "--stack", crashStack)
	out := acctest.StartOwned(e.t, cmd)
	acctest.KillWhileHeld(e.t, cmd, out, f, "pulumi", "pulumi-language-yaml", "pulumi-resource-k8sconnect")
}

// upAfterKill runs up after a killed run: a stale lock (Pulumi's own) is
// cleared with `pulumi cancel`, as the lock error tells the user.
func (e *pulumiCrash) upAfterKill() pulumiResult {
	e.t.Helper()
	r := e.up("right after the kill")
	if r.err != nil {
		if !strings.Contains(r.out, "pulumi cancel") {
			e.t.Fatalf("pulumi up after the kill failed, and not because of the stale lock: %v\n%s", r.err, r.out)
		}
		e.t.Logf("pulumi up after the kill: the stack is locked; running pulumi cancel as the error says")
		e.mustSucceed(e.timed("cancel", "cancel", "--yes"), "cancel")
		r = e.up("recovering")
	}
	return r
}

// A failed update (applied by the server, the response lost every time)
// keeps the previous state and is no replacement; re-running converges.
func TestPulumiCrash_updateResponseLost(t *testing.T) {
	e := newPulumiCrash(t)
	e.mustSucceed(e.up("create"), "up")
	uid := e.expectConverged("", "one")

	e.write("two")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Cut})
	e.mustFail(e.up("update, every response cut"), "up")
	acctest.ExpectActed(e.t, f)
	if g := e.stateGreeting(); g != "one" {
		t.Fatalf("the failed update changed the state: greeting %q, want the previous %q", g, "one")
	}
	f.Remove()
	e.expectPreview(map[string]int{"same": 1, "update": 1}) // in place, no replacement
	if objs := e.obj.Objects(); string(objs[e.name].UID) != uid || len(objs) != 1 {
		t.Fatalf("after the failed update: want only ConfigMap %s with UID %s, have %v", e.name, uid, objs)
	}

	e.mustSucceed(e.up("recovering"), "up")
	e.expectConverged(uid, "two")
}

// Drop: the delete never reaches the server, destroy fails, the resource stays
// in state and re-running finishes it. Cut: the delete lands, its answer is
// lost; the retry reads the object, finds it gone, and the same run succeeds.
func TestPulumiCrash_deleteFails(t *testing.T) {
	t.Parallel()
	for _, action := range []faultproxy.Action{faultproxy.Drop, faultproxy.Cut} {
		t.Run(action.String(), func(t *testing.T) {
			e := newPulumiCrash(t)
			e.mustSucceed(e.up("create"), "up")
			uid := e.expectConverged("", "one")

			f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.DeleteOf("configmaps", e.name), Action: action})
			r := e.destroy("delete " + action.String())
			acctest.ExpectActed(e.t, f)
			if action == faultproxy.Cut {
				// The delete landed; its retry reads the object first, finds
				// it gone, and the same run succeeds.
				e.mustSucceed(r, "destroy")
				e.obj.ExpectNoObjects()
				e.expectInState(0)
				return
			}
			e.mustFail(r, "destroy")
			e.expectInState(1)
			if objs := e.obj.Objects(); string(objs[e.name].UID) != uid || len(objs) != 1 {
				t.Fatalf("after a delete that never reached the server: want only ConfigMap %s with UID %s, have %v", e.name, uid, objs)
			}

			f.Remove()
			e.mustSucceed(e.destroy("recovering"), "destroy")
			e.obj.ExpectNoObjects()
			if res, pending := e.export(); len(res) != 0 || len(pending) != 0 {
				t.Fatalf("after the recovering destroy: want an empty stack, have resources %v, pending %v", res, pending)
			}
		})
	}
}

// k8sconnect_patch (docs/adr/0002-crash-safe-patch.md) at its four crash
// points, as in provider/patch's crash_test.go.

// patchesInState are the Patch resources in the stack's state, and the
// pending operations.
func (e *pulumiCrash) patchesInState() ([]stateResource, []string) {
	e.t.Helper()
	all, pending := e.export()
	var out []stateResource
	for _, r := range all {
		if r.Type == "k8sconnect:index/patch:Patch" {
			out = append(out, r)
		}
	}
	return out, pending
}

// patchManagersOn is the target's k8sconnect_patch managers.
func (e *pulumiCrash) patchManagersOn() []string {
	e.t.Helper()
	return acctest.PatchManagers(acctest.MustGet(e.t, objConfigMaps, e.ns, e.name))
}

// expectPatchConverged checks the end of a recovering run: the patch once in
// state, exactly one patch manager (want, when given), the target's UID and
// Helm's data kept, a preview with nothing to do.
func (e *pulumiCrash) expectPatchConverged(target *unstructured.Unstructured, want string) {
	e.t.Helper()
	if res, pending := e.patchesInState(); len(res) != 1 || len(pending) != 0 {
		e.t.Fatalf("patches in state = %v with pending %v, want the patch once and nothing pending", res, pending)
	}
	if got := e.patchManagersOn(); len(got) != 1 || (want != "" && got[0] != want) {
		e.t.Fatalf("patch managers on the target = %q, want exactly one (%q)", got, want)
	}
	live := acctest.MustGet(e.t, objConfigMaps, e.ns, e.name)
	if live.GetUID() != target.GetUID() {
		e.t.Fatalf("the target was replaced: UID %s, was %s", live.GetUID(), target.GetUID())
	}
	if data := live.Object["data"].(map[string]any); data["greeting"] != "patched" || data["owner"] != "helm" {
		e.t.Fatalf("target data = %v, want greeting patched and helm's owner kept", data)
	}
	e.expectPreview(map[string]int{"same": 2})
}

// 1. The patch never reaches the server.
func TestPulumiCrash_patchDroppedBeforeTheServer(t *testing.T) {
	e := newPulumiCrash(t)
	target := e.writePatch()
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Drop})
	e.mustFail(e.up("patch dropped"), "up")
	acctest.ExpectActed(t, f)
	if got := e.patchManagersOn(); len(got) != 0 {
		t.Fatalf("a patch that never reached the server left managers %q", got)
	}
	f.Remove()
	e.mustSucceed(e.up("recovering"), "up")
	e.expectPatchConverged(target, "")
}

// 2. The patch reaches the server, its answer is cut: the next up finishes
// the create under the manager the lost run left.
func TestPulumiCrash_patchResponseLost(t *testing.T) {
	e := newPulumiCrash(t)
	target := e.writePatch()
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Cut})
	e.mustFail(e.up("patch's answer cut"), "up")
	acctest.ExpectActed(t, f)
	if res, _ := e.patchesInState(); len(res) != 0 {
		t.Fatalf("patches in state after the failed up = %v, want none", res)
	}
	lost := e.patchManagersOn()
	if len(lost) != 1 {
		t.Fatalf("after the cut the target should carry one patch manager, has %q", lost)
	}
	f.Remove()
	e.mustSucceed(e.up("recovering"), "up")
	e.expectPatchConverged(target, lost[0])
}

// 3. pulumi and its plugins are killed while the landed patch's answer is held.
func TestPulumiCrash_patchKilledAfterThePatch(t *testing.T) {
	e := newPulumiCrash(t)
	target := e.writePatch()
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", e.name), Action: faultproxy.Pause, Times: 1})
	e.killWhileHeld(f)
	lost := e.patchManagersOn()
	if len(lost) != 1 {
		t.Fatalf("after the kill the target should carry one patch manager, has %q", lost)
	}
	e.mustSucceed(e.upAfterKill(), "up")
	if _, pending := e.export(); len(pending) > 0 {
		e.mustSucceed(e.timed("refresh --clear-pending-creates", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"), "refresh")
	}
	e.expectPatchConverged(target, lost[0])
}

// 4. Destroy's release lands, its answer is cut every time: the same destroy
// reads the target before sending the release again, finds the manager gone
// and finishes, having sent it once (docs/adr/0012-network-failures.md).
func TestPulumiCrash_patchReleaseResponseLost(t *testing.T) {
	e := newPulumiCrash(t)
	target := e.writePatch()
	e.mustSucceed(e.up("create"), "up")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "PATCH", Path: "/configmaps/" + e.name, Body: "managedFields"}, Action: faultproxy.Cut})
	e.mustSucceed(e.destroy("release's answer cut"), "destroy")
	if f.Hits() != 1 {
		t.Fatalf("the release was sent %d times; want once, then settled by reading the target", f.Hits())
	}
	if res, _ := e.patchesInState(); len(res) != 0 {
		t.Fatalf("patches in state after destroy = %v, want none", res)
	}
	live := acctest.MustGet(t, objConfigMaps, e.ns, e.name)
	if got := acctest.PatchManagers(live); len(got) != 0 {
		t.Fatalf("patch managers left on the target: %q", got)
	}
	if data := live.Object["data"].(map[string]any); data["greeting"] != "patched" || data["owner"] != "helm" || live.GetUID() != target.GetUID() {
		t.Fatalf("target after release: UID %s (was %s), data %v; want the released value and helm's owner kept", live.GetUID(), target.GetUID(), data)
	}
}

// A `pulumi refresh` that gets no answer about the target (every read of it
// dropped) keeps the Patch in the stack, as provider/patch's
// TestAccPatch_refreshWithoutAnAnswerKeepsState does under Terraform and
// OpenTofu. Unlike `terraform apply -refresh-only`, the run fails: a plan of
// the resource runs during Pulumi's refresh too (the error is ModifyPlan's),
// and it cannot read the target either. Both the warning and the error name the target and the remedy, and
// the next run, with the cluster reachable, finds nothing to do.
func TestPulumiCrash_patchRefreshWithoutAnAnswerKeepsState(t *testing.T) {
	e := newPulumiCrash(t)
	target := e.writePatch()
	e.mustSucceed(e.up("create"), "up")
	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", Path: "/configmaps/" + e.name}, Action: faultproxy.Drop})
	r := e.timed("refresh (no answer about the target)", "refresh", "--yes", "--skip-preview")
	e.mustFail(r, "refresh")
	acctest.ExpectActed(t, f)
	if res, pending := e.patchesInState(); len(res) != 1 || len(pending) != 0 {
		t.Fatalf("patches in state after a refresh that got no answer = %v with pending %v, want the patch kept", res, pending)
	}
	for _, want := range []string{
		"Could not refresh the patch of ConfigMap " + e.ns + "/" + e.name + "; state kept as it was",
		"Could not read the target - Reading ConfigMap " + e.ns + "/" + e.name,
		"run again when the cluster is reachable",
	} {
		if !strings.Contains(r.out, want) {
			t.Fatalf("pulumi refresh should say %q:\n%s", want, r.out)
		}
	}
	f.Remove()
	e.expectPatchConverged(target, "")
}
