package bridge_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// takeOwnership under the real Pulumi engine: a ConfigMap of the chart that
// kubectl made first fails the up, naming kubectl; with takeOwnership the up
// adopts it in place (same UID), warning that it does and naming kubectl,
// and hands the field the chart sets over to k8sconnect; the next preview
// changes nothing.
func TestPulumiHelmReleaseTakeOwnership(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "one-configmap")
	acctest.ApplyAs(t, "kubectl", releaseConfigMaps, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\n"+
		"metadata: {name: adopted-settings, namespace: %s}\ndata: {greeting: hello}\n", ns))
	uid := acctest.UID(t, releaseConfigMaps, ns, "adopted-settings")
	program := func(take bool) string {
		props := map[string]any{
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              "adopted",
			"namespace":         ns,
			"chart":             chart,
		}
		if take {
			props["takeOwnership"] = true
		}
		return releaseProgram(t, "k8sconnect-helm-take", map[string]map[string]any{"app": props}, nil)
	}
	s := pulumitest.NewYAMLProgram(t, program(false))
	failed, err := s.Try(pulumitest.Up, nil)
	if err == nil || !strings.Contains(failed.Log, "belongs to no Helm release (made by kubectl)") {
		t.Fatalf("without takeOwnership the up should fail naming kubectl: %v\n%s", err, failed.Log)
	}

	s.WriteYAML(program(true))
	up := s.Run(pulumitest.Up, nil)
	if !strings.Contains(up.Log, "Taking ownership of an object") || !strings.Contains(up.Log, "made by kubectl") {
		t.Errorf("the up should warn that it takes the ConfigMap from kubectl:\n%s", up.Log)
	}
	if got := acctest.UID(t, releaseConfigMaps, ns, "adopted-settings"); got != uid {
		t.Errorf("the ConfigMap was recreated: UID %s -> %s", uid, got)
	}
	for _, e := range acctest.MustGet(t, releaseConfigMaps, ns, "adopted-settings").GetManagedFields() {
		if e.Manager != "k8sconnect" && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), `"f:greeting"`) {
			t.Errorf("data.greeting should be k8sconnect's alone, %s still holds it", e.Manager)
		}
	}
	s.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst, pulumitest.ExpectNoChanges)
}
