package bridge_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// disableOpenapiValidation under the real Pulumi engine: the up that first
// leaves a field the cluster does not know out of the chart's ConfigMap warns,
// naming it, and installs; the previews after it, refreshed or not, change
// nothing and say nothing of it, as the Terraform plan after the apply says
// nothing (provider/helmrelease's TestAccHelmReleaseDisableOpenAPIValidation).
func TestPulumiHelmReleaseDisableOpenAPIValidationWarnsOnce(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	const warning = "Fields the cluster does not know are left out"
	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-helm-openapi", map[string]map[string]any{"app": {
		"clusterConnection":        map[string]any{"kubeconfigFile": kubeconfig},
		"name":                     "lenient",
		"namespace":                ns,
		"chart":                    filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "unknownfield"),
		"disableOpenapiValidation": true,
	}}, nil))
	up := s.Run(pulumitest.Up, nil)
	if !strings.Contains(up.Log, warning) || !strings.Contains(up.Log, "lenient-settings sets color") {
		t.Errorf("the up should warn that color is left out:\n%s", up.Log)
	}
	if err := acctest.ConfigMapHas(t, ns, "lenient-settings", "greeting", "hello"); err != nil {
		t.Error(err)
	}
	for _, refresh := range []bool{false, true} {
		opts := []pulumitest.Flag{pulumitest.ExpectNoChanges}
		if refresh {
			opts = append(opts, pulumitest.RefreshFirst)
		}
		if preview := s.Run(pulumitest.Preview, nil, opts...); strings.Contains(preview.Log, warning) {
			t.Errorf("a preview after the up (refresh %v) should not warn again:\n%s", refresh, preview.Log)
		}
	}
}
