package helmrelease_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// A signed chart in a repository behind TLS and a password, with verify =
// true, as `helm install --verify --keyring`: while its provenance file is
// signed by a key not in the keyring, the plan fails saying so and naming
// the keyring, and nothing is installed; signed by the keyring's key, the
// release installs.
func TestAccHelmReleaseVerifiesProvenance(t *testing.T) {
	// The provider runs in this process: its chart cache is the test's own.
	t.Setenv(helmchart.CacheDirEnv, t.TempDir())
	ns := acctest.Namespace(t)
	name := "signed"
	const user = "chart-reader"
	password := acctest.NewSecretValue("provpw")
	signer, stranger := chartrepo.NewSigner(t, "chart-signer"), chartrepo.NewSigner(t, "stranger")
	repo := chartrepo.NewRepository(t, chartrepo.Options{TLS: true, Username: user, Password: password.Plain})
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	repo.Add(t, archive)
	repo.Serve("charts/app-1.0.0.tgz.prov", stranger.Sign(t, archive))

	config := fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name                = %q
  namespace           = %q
  repository          = %q
  chart               = "app"
  version             = "1.0.0"
  repository_username = %q
  repository_password = %q
  repository_ca_file  = %q
  verify              = true
  keyring             = %q
  timeout             = "60s"
  %s
}
`, name, ns, repo.URL, user, password.Plain, repo.CAFile, signer.Keyring, acctest.Connection(t))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             appReleaseRemoved(t, ns, name),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: acctest.Words("which is not in the keyring " + signer.Keyring),
			},
			{
				PreConfig: func() {
					// The failed plan installed nothing.
					if err := appReleaseRemoved(t, ns, name)(nil); err != nil {
						t.Fatal(err)
					}
					repo.Serve("charts/app-1.0.0.tgz.prov", signer.Sign(t, archive))
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					chartVersion("1.0.0"),
					configMapData(t, ns, name+"-app", "greeting", "hello from app 1.0.0"),
					records(t, ns, name, map[string]string{"v1": "deployed"}),
				},
			},
		},
	})
}
