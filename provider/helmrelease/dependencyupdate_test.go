package helmrelease_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// A local chart depends on child ^1.0.0, its charts/ empty, its Chart.lock
// pinning 1.0.0, and the repository has 1.0.0 and 1.1.0. Without
// dependency_update the lock's 1.0.0 is installed, as helm dependency build
// fetches it; with it the newest the range allows, 1.1.0, as helm install
// --dependency-update resolves it, as an upgrade (a new chart_digest).
func TestAccHelmReleaseDependencyUpdate(t *testing.T) {
	t.Setenv(helmchart.CacheDirEnv, t.TempDir())
	ns := acctest.Namespace(t)
	name := "depupdate"
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("child", "1.0.0")))
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("child", "1.1.0")))
	dep := &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL}
	dir, err := chartrepo.WriteDir(chartrepo.Chart("parent", "0.1.0", dep), t.TempDir(),
		&chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "1.0.0", Repository: repo.URL}}, Digest: "sha256:0"})
	if err != nil {
		t.Fatal(err)
	}
	config := func(more string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, dir, more, acctest.Connection(t))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:            config(""),
				ConfigStateChecks: []statecheck.StateCheck{configMapData(t, ns, name+"-child", "greeting", "hello from child 1.0.0")},
			},
			{
				Config: config("dependency_update = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-child", "greeting", "hello from child 1.1.0"),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}
