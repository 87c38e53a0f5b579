package helmrelease_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
)

// A chart in an OCI registry without TLS, behind a password, as a registry on
// the local machine is: without plain_http the plan fails, saying the
// registry answers in plain HTTP and what to set, and nothing is installed;
// with it the release installs.
func TestAccHelmReleaseFromPlainHTTPRegistry(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "plainreg"
	const user = "chart-reader"
	password := acctest.NewSecretValue("regpw")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{PlainHTTP: true, Username: user, Password: password.Plain})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))

	config := func(plainHTTP string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name                = %q
  namespace           = %q
  chart               = %q
  version             = "1.0.0"
  repository_username = %q
  repository_password = %q
  plain_http          = %s
  timeout             = "60s"
  %s
}
`, name, ns, registry.Ref("charts", "app"), user, password.Plain, plainHTTP, acctest.Connection(t))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             appReleaseRemoved(t, ns, name),
		Steps: []resource.TestStep{
			{
				Config:      config("null"),
				ExpectError: regexp.MustCompile(acctest.Words("answers in plain HTTP").String() + `[\s\S]*` + acctest.Words("set plain_http = true").String()),
			},
			{
				// The failed plan installed nothing.
				PreConfig: func() {
					if err := present(t, configMaps, ns, name+"-app", false)(); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("true"),
				ConfigStateChecks: []statecheck.StateCheck{
					chartVersion("1.0.0"),
					configMapData(t, ns, name+"-app", "greeting", "hello from app 1.0.0"),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
				},
			},
		},
	})
}
