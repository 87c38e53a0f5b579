package bridge_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

const helmReleaseTyp = "k8sconnect:index/helmRelease:HelmRelease"

// provider/helmrelease's TestAccHelmReleaseKilledApplyIsResumed under Pulumi:
// `pulumi up` of a new release is killed (SIGKILL: pulumi, its language host
// and the provider plugin) halfway through the install, once the server has
// applied the Deployment and before its answer arrives (the proxy holds it):
// the pre-install hooks ran, the chart's ConfigMaps and Secret are applied,
// helm history shows revision 1 pending-install, and the stack holds no
// release. The next `pulumi up` of the same program (after `pulumi cancel`,
// which the stale lock's error asks for, and once the pending record's lease
// has run out) takes the release up again: revision 2 deployed after 1
// failed, the objects the killed run made kept (same UIDs), the release once
// in the stack, and nothing left to preview.
func TestPulumiHelmReleaseKilledUpIsResumed(t *testing.T) {
	chart := lifecycleChart(t) // first, so that its CRD goes after the stack's destroy
	e := newPulumiCrash(t)
	const name = "killed"
	kubeconfig := e.cluster.KubeconfigPath
	e.writeProgram(map[string]any{"app": map[string]any{
		"type": "k8sconnect:HelmRelease",
		"properties": map[string]any{
			"clusterConnection": yamlConnection(e.proxy.URL, e.proxy.CAPEM, e.cluster.Token),
			"name":              name,
			"namespace":         e.ns,
			"chart":             chart,
			"timeout":           "60s",
			"set":               []any{map[string]any{"name": "keep", "value": "false"}},
		},
	}})
	held := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("deployments", name+"-app"), Action: faultproxy.Pause, Times: 1})
	e.killWhileHeld(held)
	killedAt := time.Now()

	expectHistory(t, kubeconfig, e.ns, name, map[string]string{"v1": "pending-install"})
	// The chart's objects the killed run made (not its hooks, which a run
	// recreates), each with its UID.
	made := []struct {
		gvr  schema.GroupVersionResource
		name string
		uid  string
	}{
		{releaseConfigMaps, name + "-settings", ""},
		{secSecrets, name + "-auth", ""},
		{objDeployments, name + "-app", ""},
	}
	for i, m := range made {
		made[i].uid = acctest.UID(t, m.gvr, e.ns, m.name)
	}
	if n := len(e.helmReleasesInState()); n != 0 {
		t.Fatalf("the killed up left %d HelmRelease in the stack, want none", n)
	}

	// The killed run renewed its pending record until the kill; once the
	// lease (K8SCONNECT_CREATE_PENDING_LEASE, 3s here) has run out, the
	// record no longer says another run is at work.
	time.Sleep(time.Until(killedAt.Add(4 * time.Second)))
	e.mustSucceed(e.upAfterKill(), "up")
	if _, pending := e.export(); len(pending) > 0 {
		// Pulumi's own bookkeeping of the killed create, as in TestPulumiCrash_createKilledAfterTheApply.
		e.mustSucceed(e.timed("refresh --clear-pending-creates", "refresh", "--yes", "--skip-preview", "--clear-pending-creates"), "refresh")
	}
	releases := e.helmReleasesInState()
	if len(releases) != 1 {
		t.Fatalf("the stack holds %d HelmReleases after the resumed up, want 1", len(releases))
	}
	if got := releases[0].Outputs["revision"]; got != float64(2) {
		t.Errorf("revision in the stack after the resumed install = %v, want 2", got)
	}
	expectHistory(t, kubeconfig, e.ns, name, map[string]string{"v1": "failed", "v2": "deployed"})
	for _, m := range made {
		if got := acctest.UID(t, m.gvr, e.ns, m.name); got != m.uid {
			t.Errorf("the resumed install replaced %s %s that the killed run made: UID %s -> %s", m.gvr.Resource, m.name, m.uid, got)
		}
	}
	if err := acctest.ConfigMapHas(t, e.ns, name+"-post-marker", "revision", "2"); err != nil {
		t.Errorf("the resumed install did not finish with its post-install hook: %v", err)
	}
	e.expectPreview(map[string]int{"same": 2})
}

// helmReleasesInState are the HelmReleases in the stack's state.
func (e *pulumiCrash) helmReleasesInState() []stateResource {
	e.t.Helper()
	res, _ := e.export()
	var out []stateResource
	for _, r := range res {
		if r.Type == helmReleaseTyp {
			out = append(out, r)
		}
	}
	return out
}
