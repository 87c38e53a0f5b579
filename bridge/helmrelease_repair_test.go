package bridge_test

import (
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// What helm and kubectl do to a release is seen under the Pulumi engine, as
// provider/helmrelease's TestAccHelmReleaseSeesWhatHelmDid and
// TestAccHelmReleaseAccountsForObjectsHelmAdded see it under Terraform. A
// `helm rollback` and a `kubectl edit` are drift: the next `pulumi up
// --refresh` puts the objects back as the last up left them, in place (same
// UIDs), runs no hook, and writes a revision that helm history describes as a
// repair. An object a `helm upgrade` from elsewhere added is the release's:
// `pulumi refresh` puts it in objects, and the next up deletes it, so helm's
// manifest agrees with the cluster again.
//
// Pulumi refreshes only when asked (Terraform always does), and the plan of
// an up without --refresh compares what it would apply with the stack's
// objects, not with the cluster: so the drift steps refresh.
func TestPulumiHelmReleaseSeesWhatHelmDid(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	const name = "seen"
	program := func(greeting string) string {
		t.Helper()
		return releaseProgram(t, "k8sconnect-helm-seen", map[string]map[string]any{"app": {
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              name,
			"namespace":         ns,
			"chart":             chart,
			"timeout":           "60s",
			"set": []any{map[string]any{"name": "greeting", "value": greeting},
				map[string]any{"name": "extra", "value": "false"}, map[string]any{"name": "keep", "value": "false"}},
		}}, nil)
	}
	s := pulumitest.NewYAMLProgram(t, program("hello"))
	s.Run(pulumitest.Up, nil)
	s.WriteYAML(program("bonjour"))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"update": 1, "same": 1})
	settings, postMarker := name+"-settings", name+"-post-marker"
	settingsUID, postMarkerUID := acctest.UID(t, releaseConfigMaps, ns, settings), acctest.UID(t, releaseConfigMaps, ns, postMarker)

	// repaired checks an up that put the release back: revision rev, which
	// helm history calls a repair of revision 2 (the last up's rendering),
	// greeting bonjour again in the ConfigMap it had, and no hook run since
	// hooksAt (the post-upgrade hook's ConfigMap neither recreated nor
	// rewritten).
	repaired := func(up pulumitest.Result, rev int, hooksAt string) {
		t.Helper()
		expectChanges(t, up, map[string]int{"update": 1, "same": 1})
		if err := acctest.ConfigMapHas(t, ns, settings, "greeting", "bonjour"); err != nil {
			t.Errorf("pulumi up did not put the greeting back: %v", err)
		}
		if got := acctest.UID(t, releaseConfigMaps, ns, settings); got != settingsUID {
			t.Errorf("the repair replaced %s: UID %s -> %s", settings, settingsUID, got)
		}
		if got := releaseState(t, s)["revision"]; got != float64(rev) {
			t.Errorf("revision in the stack = %v, want %d", got, rev)
		}
		h := helmHistory(t, kubeconfig, ns, name)
		const want = "Repair complete: objects put back as revision 2 left them"
		if last := h[len(h)-1]; last.Revision != rev || last.Status != "deployed" || last.Description != want {
			t.Errorf("helm history's latest revision = %+v, want %d deployed %q", last, rev, want)
		}
		if err := acctest.ConfigMapHas(t, ns, postMarker, "revision", hooksAt); err != nil {
			t.Errorf("the repair ran the post-upgrade hook: %v", err)
		}
		if got := acctest.UID(t, releaseConfigMaps, ns, postMarker); got != postMarkerUID {
			t.Errorf("the repair ran the post-upgrade hook: %s recreated, UID %s -> %s", postMarker, postMarkerUID, got)
		}
	}

	// helm rollback to revision 1 (greeting hello) writes revision 3.
	helmCLI(t, kubeconfig, "rollback", name, "1", "-n", ns)
	if err := acctest.ConfigMapHas(t, ns, settings, "greeting", "hello"); err != nil {
		t.Fatalf("after helm rollback %s 1: %v", name, err)
	}
	repaired(s.Run(pulumitest.Up, nil, pulumitest.RefreshFirst), 4, "2")

	// Without a refresh, the stack still holds what the last up stored:
	// the plan sees the drift on the live object, and the up repairs it.
	acctest.PatchAs(t, "kubectl-edit", releaseConfigMaps, ns, settings, `{"data":{"greeting":"edited"}}`)
	repaired(s.Run(pulumitest.Up, nil), 5, "2")

	// helm upgrade from elsewhere adds an object (and runs the chart's
	// upgrade hooks, as revision 6).
	helmCLI(t, kubeconfig, "upgrade", name, chart, "-n", ns, "--reuse-values", "--set", "extra=true")
	acctest.MustGet(t, releaseConfigMaps, ns, name+"-extra")
	postMarkerUID = acctest.UID(t, releaseConfigMaps, ns, postMarker)
	s.Run(pulumitest.Refresh, nil)
	extraKey := "core/ConfigMap/" + ns + "/" + name + "-extra"
	if objects, _ := releaseState(t, s)["objects"].(map[string]any); objects[extraKey] == nil {
		t.Errorf("pulumi refresh should put %s, which helm upgrade added, in objects: %v", extraKey, outputKeys(objects))
	}
	repaired(s.Run(pulumitest.Up, nil), 7, "6")
	acctest.MustNotExist(t, releaseConfigMaps, ns, name+"-extra")
	if m := helmCLI(t, kubeconfig, "get", "manifest", name, "-n", ns); !strings.Contains(m, "name: "+settings) ||
		strings.Contains(m, name+"-extra") {
		t.Errorf("helm get manifest should list the release's objects but not %s-extra:\n%s", name, m)
	}
	if objects, _ := releaseState(t, s)["objects"].(map[string]any); objects[extraKey] != nil {
		t.Errorf("objects still lists %s after the up deleted it", extraKey)
	}
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)
}
