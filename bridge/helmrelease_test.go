package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// lifecycleRelease starts a HelmRelease test: in parallel with the others,
// on the shared cluster (its kubeconfig), in a namespace of its own, with the
// lifecycle chart of the Terraform tests (lifecycleChart).
func lifecycleRelease(t *testing.T) (kubeconfig, ns, chart string) {
	t.Helper()
	skipShort(t)
	t.Parallel()
	return localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t), lifecycleChart(t)
}

// lifecycleChart is a copy of the Terraform tests' lifecycle chart whose
// crds/ CRD has a group of the test's own: a CRD is cluster-wide, and
// releases installing one at the same moment race for it (the second is
// refused), which is a test of its own, not of every test.
func lifecycleChart(t *testing.T) string {
	t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	group := strings.ToLower(acctest.Name("lifecycle")) + ".k8sconnect.test"
	t.Cleanup(func() {
		_ = acctest.Dynamic(t).Resource(helmCRDs).Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{})
	})
	return renamedChart(t, filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "lifecycle"),
		"helmrelease.k8sconnect.test", group)
}

var releaseConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// helmRevision is one line of `helm history`.
type helmRevision struct {
	Revision    int    `json:"revision"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// helmHistory is the release's history as `helm history` prints it, oldest
// first.
func helmHistory(t *testing.T, kubeconfig, ns, name string) []helmRevision {
	t.Helper()
	out := helmCLI(t, kubeconfig, "history", name, "-n", ns, "-o", "json")
	var h []helmRevision
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("helm history -o json: %v\n%s", err, out)
	}
	return h
}

// helmStatus is the status and revision `helm status` shows of the
// release: what helm takes the release to be now.
func helmStatus(t *testing.T, kubeconfig, ns, name string) (string, int) {
	t.Helper()
	out := helmCLI(t, kubeconfig, "status", name, "-n", ns, "-o", "json")
	var st struct {
		Version int `json:"version"`
		Info    struct {
			Status string `json:"status"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("helm status -o json: %v\n%s", err, out)
	}
	return st.Info.Status, st.Version
}

// expectHistory checks the statuses helm history shows, by revision
// ("v1": "superseded", ...): exactly those revisions, no other.
func expectHistory(t *testing.T, kubeconfig, ns, name string, want map[string]string) []helmRevision {
	t.Helper()
	h := helmHistory(t, kubeconfig, ns, name)
	got := map[string]string{}
	for _, r := range h {
		got[fmt.Sprintf("v%d", r.Revision)] = r.Status
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("helm history of %s/%s: %v, want %v", ns, name, h, want)
	}
	return h
}

// releaseState is the outputs of the stack's one HelmRelease, as
// `pulumi stack export` holds them.
func releaseState(t *testing.T, s *pulumitest.Stack) map[string]any {
	t.Helper()
	out := s.CLI("stack", "export", "--show-secrets")
	var export struct {
		Deployment struct {
			Resources []stateResource `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(out[max(0, strings.Index(out, "{")):]), &export); err != nil {
		t.Fatalf("pulumi stack export: %v\n%s", err, out)
	}
	var found []map[string]any
	for _, r := range export.Deployment.Resources {
		if r.Type == "k8sconnect:index/helmRelease:HelmRelease" {
			found = append(found, r.Outputs)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the stack holds %d HelmReleases, want 1:\n%s", len(found), out)
	}
	return found[0]
}

// releaseProgram is a YAML program of HelmReleases, name -> properties, each
// with the resource options of options[name] if any.
func releaseProgram(t *testing.T, project string, releases map[string]map[string]any, options map[string]map[string]any) string {
	t.Helper()
	resources := map[string]any{}
	for name, props := range releases {
		r := map[string]any{"type": "k8sconnect:HelmRelease", "properties": props}
		if o, ok := options[name]; ok {
			r["options"] = o
		}
		resources[name] = r
	}
	b, err := yaml.Marshal(map[string]any{"name": project, "runtime": "yaml", "resources": resources})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HelmRelease under the real Pulumi engine, through the steps of the
// Terraform tests' lifecycle: the lifecycle chart installs (its hooks run,
// revision 1 is recorded in Helm's format) with deleteProtection, so
// `pulumi destroy` is refused and changes nothing; a preview of the same
// program changes nothing; a changed value upgrades in place to revision 2,
// which also drops an object from the chart (extra=false): it leaves the
// cluster, the objects output and helm's manifest. A failing pre-upgrade hook
// fails the run with the pod's own message and leaves revision 3 failed in
// helm history and helm status, and in the stack once refreshed (status
// "failed"); the next
// up (the program back to revision 2's) goes through as revision 4, a repair
// of revision 2. The setSensitive value reaches the cluster but not the engine's
// output or the stack's state in clear.
func TestPulumiHelmRelease(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	pw := acctest.NewSecretValue("pw")
	program := func(protected bool, set ...string) string {
		t.Helper()
		entries := []any{}
		for i := 0; i < len(set); i += 2 {
			entries = append(entries, map[string]any{"name": set[i], "value": set[i+1]})
		}
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-helm-release", "runtime": "yaml",
			"resources": map[string]any{
				"app": map[string]any{"type": "k8sconnect:HelmRelease", "properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"name":              "life",
					"namespace":         ns,
					"chart":             chart,
					"timeout":           "60s",
					"deleteProtection":  protected,
					"set":               entries,
					"setSensitive":      []any{map[string]any{"name": "password", "value": pw.Plain}},
				}},
			},
			"outputs": map[string]any{"revision": "${app.revision}", "objects": "${app.objects}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := pulumitest.NewYAMLProgram(t, program(true, "greeting", "hello"))
	up := s.Run(pulumitest.Up, nil)
	expectChanges(t, up, map[string]int{"create": 2})
	if got := fmt.Sprint(up.Outputs["revision"]); got != "1" {
		t.Errorf("revision after install = %s, want 1", got)
	}
	for _, c := range []acctest.ClusterCheck{
		func() error { return acctest.ConfigMapHas(t, ns, "life-settings", "greeting", "hello") },
		func() error { return acctest.ConfigMapHas(t, ns, "life-post-marker", "revision", "1") },
		func() error { return acctest.ConfigMapHas(t, ns, "life-extra", "note", "leaves with extra=false") },
	} {
		if err := c(); err != nil {
			t.Error(err)
		}
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})

	// deleteProtection: destroy is refused, saying why, and nothing goes.
	settingsUID := acctest.UID(t, releaseConfigMaps, ns, "life-settings")
	destroy, err := s.Try(pulumitest.Destroy, nil)
	if err == nil {
		t.Fatalf("pulumi destroy of a release with deleteProtection succeeded:\n%s", destroy.Log)
	}
	if !strings.Contains(flat(destroy.Log), "The release is protected from deletion") {
		t.Errorf("pulumi destroy should say the release is protected from deletion:\n%s", destroy.Log)
	}
	if got := acctest.UID(t, releaseConfigMaps, ns, "life-settings"); got != settingsUID {
		t.Errorf("the refused destroy replaced life-settings: UID %s -> %s", settingsUID, got)
	}
	expectHistory(t, kubeconfig, ns, "life", map[string]string{"v1": "deployed"})
	if resources, _ := s.Resources(); len(resources) != 1 {
		t.Fatalf("the refused destroy changed the stack: %v", resources)
	}

	// An upgrade, the protection lifted, and an object leaving the chart.
	s.WriteYAML(program(false, "greeting", "bonjour", "extra", "false"))
	up2 := s.Run(pulumitest.Up, nil)
	expectChanges(t, up2, map[string]int{"update": 1, "same": 1})
	if got := fmt.Sprint(up2.Outputs["revision"]); got != "2" {
		t.Errorf("revision after upgrade = %s, want 2", got)
	}
	if err := acctest.ConfigMapHas(t, ns, "life-settings", "greeting", "bonjour"); err != nil {
		t.Error(err)
	}
	if got := acctest.UID(t, releaseConfigMaps, ns, "life-settings"); got != settingsUID {
		t.Errorf("the upgrade replaced life-settings: UID %s -> %s", settingsUID, got)
	}
	acctest.MustNotExist(t, releaseConfigMaps, ns, "life-extra")
	extraKey := "core/ConfigMap/" + ns + "/life-extra"
	if objects, _ := up2.Outputs["objects"].(map[string]any); objects[extraKey] != nil {
		t.Errorf("the objects output still lists %s, which left the chart", extraKey)
	}
	if m := helmCLI(t, kubeconfig, "get", "manifest", "life", "-n", ns); strings.Contains(m, "life-extra") ||
		!strings.Contains(m, "greeting: bonjour") {
		t.Errorf("helm get manifest should hold revision 2's objects, without life-extra:\n%s", m)
	}
	objects := fmt.Sprint(up2.Outputs["objects"])
	acctest.ExpectPresent(t, "the objects output", objects, "(sensitive, hmac-sha256:")

	// A failing hook fails the upgrade with the pod's message.
	s.WriteYAML(program(false, "greeting", "bonjour", "extra", "false", "failHook", "true"))
	failed, err := s.Try(pulumitest.Up, nil)
	if err == nil {
		t.Fatalf("pulumi up with a failing pre-upgrade hook succeeded:\n%s", failed.Log)
	}
	if !regexp.MustCompile(`pre-upgrade hook batch/Job/` + ns + `/life-migrate failed.*BackoffLimitExceeded.*failed on purpose.*exit code 1`).
		MatchString(flat(failed.Log)) {
		t.Errorf("the failed up should name the hook and give the pod's message:\n%s", failed.Log)
	}
	expectHistory(t, kubeconfig, ns, "life", map[string]string{"v1": "superseded", "v2": "deployed", "v3": "failed"})
	if err := acctest.ConfigMapHas(t, ns, "life-post-marker", "revision", "2"); err != nil {
		t.Errorf("the failed upgrade ran its post-upgrade hook: %v", err)
	}
	// The engine keeps a failed update's previous state (the bridge drops
	// what the provider returns with an error), so the failed revision is
	// seen through a refresh, which reads the release's latest record.
	s.Run(pulumitest.Refresh, nil)
	if st := releaseState(t, s); st["status"] != "failed" || st["revision"] != float64(3) {
		t.Errorf("the stack after the failed upgrade and a refresh: status %v, revision %v; want failed, 3", st["status"], st["revision"])
	}
	// helm status agrees with the stack and with helm history.
	if status, rev := helmStatus(t, kubeconfig, ns, "life"); status != "failed" || rev != 3 {
		t.Errorf("helm status after the failed upgrade: %s, revision %d; want failed, 3", status, rev)
	}

	// The hook fixed, the next up goes through.
	s.WriteYAML(program(false, "greeting", "bonjour", "extra", "false"))
	up4 := s.Run(pulumitest.Up, nil)
	expectChanges(t, up4, map[string]int{"update": 1, "same": 1})
	if got := fmt.Sprint(up4.Outputs["revision"]); got != "4" {
		t.Errorf("revision after the failed upgrade's retry = %s, want 4", got)
	}
	if got := releaseState(t, s)["status"]; got != "deployed" {
		t.Errorf("status in the stack after the retry = %v, want deployed", got)
	}
	expectHistory(t, kubeconfig, ns, "life", map[string]string{"v1": "superseded", "v2": "superseded", "v3": "failed", "v4": "deployed"})
	// The program is revision 2's again and the failed hook changed none of
	// the release's objects: the retry is a repair, with no hook.
	if h := helmHistory(t, kubeconfig, ns, "life"); h[len(h)-1].Description != "Repair complete: objects put back as revision 2 left them" {
		t.Errorf("helm history's revision 4 = %+v, want a repair of revision 2", h[len(h)-1])
	}
	if err := acctest.ConfigMapHas(t, ns, "life-post-marker", "revision", "2"); err != nil {
		t.Error(err)
	}

	for where, text := range map[string]string{"up output": up.Log + up2.Log + failed.Log + up4.Log, "objects output": objects,
		"stack export": s.CLI("stack", "export")} {
		acctest.ExpectAbsent(t, where, text, pw)
	}
}

// The same release declared twice in one program: the engine creates both at
// once. Exactly one gets the release; the other fails saying why and writes
// nothing (no second revision, no value of its own in the cluster, nothing
// in the stack). With one declaration left, a preview changes nothing.
func TestPulumiHelmReleaseDeclaredTwice(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	program := func(decls ...string) string {
		t.Helper()
		releases := map[string]map[string]any{}
		for _, d := range decls {
			releases[d] = map[string]any{
				"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
				"name":              "twice",
				"namespace":         ns,
				"chart":             chart,
				"timeout":           "90s",
				"set":               []any{map[string]any{"name": "greeting", "value": "from-" + d}},
			}
		}
		return releaseProgram(t, "k8sconnect-helm-twice", releases, nil)
	}
	s := pulumitest.NewYAMLProgram(t, program("first", "second"))
	up, err := s.Try(pulumitest.Up, nil)
	if err == nil {
		t.Fatalf("pulumi up of one release declared twice succeeded:\n%s", up.Log)
	}
	if text := err.Error() + up.Log; !strings.Contains(text, "Two declarations of one release") &&
		!strings.Contains(text, "already exists in the cluster") {
		t.Errorf("the loser's error should say that the release is declared twice or already exists:\n%s", text)
	}
	resources, _ := s.Resources()
	if len(resources) != 1 {
		t.Fatalf("exactly one declaration should hold the release, the stack has %v", resources)
	}
	winner := resources[0][strings.LastIndex(resources[0], " ")+1:]
	if err := acctest.ConfigMapHas(t, ns, "twice-settings", "greeting", "from-"+winner); err != nil {
		t.Errorf("the loser changed the winner's objects: %v", err)
	}
	records := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if v1, err := acctest.Get(t, records, ns, "sh.helm.release.v1.twice.v1"); err != nil || v1 == nil ||
		v1.GetLabels()["status"] != "deployed" {
		t.Errorf("revision 1 should be deployed: %v %v", v1, err)
	}
	if v2, err := acctest.Get(t, records, ns, "sh.helm.release.v1.twice.v2"); err != nil || v2 != nil {
		t.Errorf("the loser wrote a revision 2 (%v)", err)
	}
	s.WriteYAML(program(winner))
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
}

// ignoreFields under the Pulumi engine: a field k8sconnect owned alone and
// newly ignores keeps its value (handed over, not deleted), and an HPA's
// scaling of an ignored spec.replicas is no change for a refreshing preview.
func TestPulumiHelmReleaseIgnoreFields(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	program := func(ignore map[string]any) string {
		t.Helper()
		props := map[string]any{
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              "scaled",
			"namespace":         ns,
			"chart":             chart,
			"timeout":           "90s",
		}
		if ignore != nil {
			props["ignoreFields"] = ignore
		}
		return releaseProgram(t, "k8sconnect-helm-ignore", map[string]map[string]any{"app": props}, nil)
	}
	s := pulumitest.NewYAMLProgram(t, program(nil))
	s.Run(pulumitest.Up, nil)

	s.WriteYAML(program(map[string]any{
		"apps/Deployment/*/*":              []any{"spec.replicas"},
		"core/ConfigMap/*/scaled-settings": []any{"data.greeting"},
	}))
	s.Run(pulumitest.Up, nil)
	if err := acctest.ConfigMapHas(t, ns, "scaled-settings", "greeting", "hello"); err != nil {
		t.Errorf("a newly ignored field k8sconnect owned alone should keep its value: %v", err)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	acctest.PatchAs(t, "horizontal-pod-autoscaler", deployments, ns, "scaled-app", `{"spec":{"replicas":4}}`)
	s.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst, pulumitest.ExpectNoChanges)
}

// The token in the kubeconfig file expires between two runs. Pulumi's refresh
// reads the release (which keeps it, warning that the stored credentials were
// refused, as terraform's refresh does) and then compares it with the program
// through the provider's plan, which needs the credentials too: so the refresh
// fails, saying the credentials expired and what to do, and the stack keeps
// the release. So does a preview. With a renewed token the preview changes
// nothing: the same revision, no record written.
func TestPulumiHelmReleaseExpiredTokenKeepsState(t *testing.T) {
	_, ns, chart := lifecycleRelease(t)
	cluster := localcluster.Shared(t)
	kc := acctest.NewTokenKubeconfig(t, cluster, cluster.Token)
	kubeconfig, writeToken := kc.Path, kc.Write
	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-helm-expired", map[string]map[string]any{
		"app": {"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name": "expired", "namespace": ns, "chart": chart, "timeout": "60s"},
	}, nil))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 2})

	writeToken("expired-" + cluster.Token[:8])
	for _, op := range []pulumitest.Operation{pulumitest.Refresh, pulumitest.Preview} {
		r, err := s.Try(op, nil)
		if err == nil {
			t.Fatalf("%s with an expired token should fail:\n%s", op, r.Log)
		}
		if !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "Renew it") {
			t.Errorf("the %s's error does not say the credentials expired and what to do:\n%v", op, err)
		}
		if op == pulumitest.Refresh && !strings.Contains(err.Error(), "Stored credentials refused") {
			t.Errorf("the refresh should warn that the stored credentials were refused:\n%v", err)
		}
		acctest.ExpectAbsent(t, "the "+string(op)+"'s output", err.Error(), acctest.SecretValue{Plain: cluster.Token})
		if resources, _ := s.Resources(); len(resources) != 1 || !strings.Contains(resources[0], "HelmRelease") {
			t.Fatalf("the %s dropped the release from the stack: %v", op, resources)
		}
	}

	writeToken(cluster.Token)
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 2})
	if err := acctest.ConfigMapHas(t, ns, "expired-settings", "greeting", "hello"); err != nil {
		t.Error(err)
	}
	if record, err := acctest.Get(t, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, ns, "sh.helm.release.v1.expired.v2"); err != nil || record != nil {
		t.Errorf("a second revision was written (%v, present %v)", err, record != nil)
	}
}
