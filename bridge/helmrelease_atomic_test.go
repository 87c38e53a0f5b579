package bridge_test

import (
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// atomic under the real Pulumi engine, as provider/helmrelease's
// TestAccHelmReleaseAtomicRollsBackAFailedUpgrade has it under Terraform: an
// upgrade whose readiness wait times out fails `pulumi up`, saying that it
// was rolled back; the cluster holds revision 1's values and objects again
// (the same UIDs; the object the upgrade created is gone), helm history
// shows revision 3 "Rollback to 1" deployed, and a refresh puts that
// revision in the stack.
func TestPulumiHelmReleaseAtomicRollsBack(t *testing.T) {
	kubeconfig, ns, chart := lifecycleRelease(t)
	const name = "rolled"
	program := func(set ...string) string {
		t.Helper()
		entries := []any{map[string]any{"name": "extra", "value": "false"}, map[string]any{"name": "keep", "value": "false"}}
		for i := 0; i < len(set); i += 2 {
			entries = append(entries, map[string]any{"name": set[i], "value": set[i+1]})
		}
		return releaseProgram(t, "k8sconnect-helm-atomic", map[string]map[string]any{"app": {
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              name,
			"namespace":         ns,
			"chart":             chart,
			"timeout":           "15s",
			"atomic":            true,
			"set":               entries,
		}}, nil)
	}
	s := pulumitest.NewYAMLProgram(t, program("greeting", "hello"))
	s.Run(pulumitest.Up, nil)
	settings, app := name+"-settings", name+"-app"
	settingsUID, appUID := acctest.UID(t, releaseConfigMaps, ns, settings), acctest.UID(t, objDeployments, ns, app)

	s.WriteYAML(program("greeting", "bonjour", "holdPods", "true", "extra", "true"))
	failed, err := s.Try(pulumitest.Up, nil)
	if err == nil {
		t.Fatalf("pulumi up of an upgrade that never becomes ready, under atomic, succeeded:\n%s", failed.Log)
	}
	for _, want := range []string{
		"Release not ready; rolled back to revision 1",
		"apps/Deployment/" + ns + "/" + app + " is not ready",
		`Revision 3, which helm history shows as "Rollback to 1"`,
		"Deleted, as the upgrade created them: core/ConfigMap/" + ns + "/" + name + "-extra.",
	} {
		if !strings.Contains(flat(failed.Log), flat(want)) {
			t.Errorf("the failed up should say %q:\n%s", want, failed.Log)
		}
	}
	if err := acctest.ConfigMapHas(t, ns, settings, "greeting", "hello"); err != nil {
		t.Errorf("the rollback did not put the greeting back: %v", err)
	}
	acctest.MustNotExist(t, releaseConfigMaps, ns, name+"-extra")
	if got := acctest.UID(t, releaseConfigMaps, ns, settings); got != settingsUID {
		t.Errorf("the rollback replaced %s: UID %s -> %s", settings, settingsUID, got)
	}
	if got := acctest.UID(t, objDeployments, ns, app); got != appUID {
		t.Errorf("the rollback replaced %s: UID %s -> %s", app, appUID, got)
	}
	h := expectHistory(t, kubeconfig, ns, name, map[string]string{"v1": "superseded", "v2": "failed", "v3": "deployed"})
	if last := h[len(h)-1]; last.Description != "Rollback to 1" {
		t.Errorf("helm history's revision 3 = %+v, want described \"Rollback to 1\"", last)
	}
	s.Run(pulumitest.Refresh, nil)
	if st := releaseState(t, s); st["status"] != "deployed" || st["revision"] != float64(3) {
		t.Errorf("the stack after the rollback and a refresh: status %v, revision %v; want deployed, 3", st["status"], st["revision"])
	}
}
