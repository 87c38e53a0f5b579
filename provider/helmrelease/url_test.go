package helmrelease_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// A chart given as the https:// URL of its packaged archive, behind TLS and
// a password, as `helm install NAME URL` takes one: the release's objects
// reach the cluster and chart_version is the archive's; an archive
// republished at the same URL is the next plan's upgrade; a version the URL
// no longer serves fails the plan.
func TestAccHelmReleaseFromChartURL(t *testing.T) {
	// The provider runs in this process: its chart cache is the test's own,
	// so no earlier run's copy of a URL on a reused port is found.
	t.Setenv(helmchart.CacheDirEnv, t.TempDir())
	ns := acctest.Namespace(t)
	name := "fromurl"
	const user = "chart-reader"
	password := acctest.NewSecretValue("chartpw")
	server := chartrepo.NewRepository(t, chartrepo.Options{TLS: true, Username: user, Password: password.Plain})
	archive := func(version string) []byte { return chartrepo.MustPackage(t, chartrepo.Chart("app", version)) }
	server.Serve("downloads/app.tgz", archive("1.2.3"))

	config := func(version string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name                = %q
  namespace           = %q
  chart               = %q
  version             = %s
  repository_username = %q
  repository_password = %q
  repository_ca_file  = %q
  timeout             = "60s"
  %s
}
`, name, ns, server.URL+"/downloads/app.tgz", version, user, password.Plain, server.CAFile, acctest.Connection(t))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             appReleaseRemoved(t, ns, name),
		Steps: []resource.TestStep{
			{
				Config: config("null"),
				ConfigStateChecks: []statecheck.StateCheck{
					chartVersion("1.2.3"),
					configMapData(t, ns, name+"-app", "greeting", "hello from app 1.2.3"),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
				},
			},
			{
				// Republished: the next plan asks the server and upgrades,
				// as helm upgrade with the URL would.
				PreConfig: func() { server.Serve("downloads/app.tgz", archive("1.3.0")) },
				Config:    config("null"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("k8sconnect_helm_release.app", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					chartVersion("1.3.0"),
					configMapData(t, ns, name+"-app", "greeting", "hello from app 1.3.0"),
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
				},
			},
			{
				// A version the URL no longer serves fails the plan, saying
				// what it holds; nothing changes.
				Config:      config(`"1.2.3"`),
				ExpectError: regexp.MustCompile(`holds chart app 1\.3\.0`),
			},
			{
				Config: config("null"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					records(t, ns, name, map[string]string{"v1": "superseded", "v2": "deployed"}),
				},
			},
		},
	})
}
