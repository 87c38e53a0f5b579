package helmrelease_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// The arguments of hashicorp/helm's helm_release that tune how a release is
// applied, what its record says and how values are set, on the extras chart.

// extrasConfig is a release of the extras chart with more arguments.
func extrasConfig(t *testing.T, ns, name, more string) string {
	return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  %s
  %s
}
`, name, ns, chartPath(t, "extras"), acctest.Connection(t), more)
}

// set_list sets lists as --set name={a,b}, each value one element: a comma
// splits nothing, and an empty list empties the chart's default.
func TestAccHelmReleaseSetList(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "listed"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config: extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = ["a.example, b.example", "c.example"] }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "hosts", `["a.example, b.example","c.example"]`),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app",
						tfjsonpath.New("objects").AtMapKey("core/ConfigMap/"+ns+"/"+name+"-settings").AtMapKey("data.hosts"),
						knownvalue.StringExact(`["a.example, b.example","c.example"]`)),
				},
			},
			{
				Config:           extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = ["a.example, b.example", "c.example"] }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: extrasConfig(t, ns, name, `set_list = [{ name = "hosts", value = [] }]`),
				ConfigStateChecks: []statecheck.StateCheck{
					configMapData(t, ns, name+"-settings", "hosts", `[]`),
					statecheck.ExpectKnownValue("k8sconnect_helm_release.app", tfjsonpath.New("revision"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}
