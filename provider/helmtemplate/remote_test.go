package helmtemplate_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
)

// remoteConfig reads the chart named by source (HCL attributes) and applies
// its ConfigMap in ns.
func remoteConfig(t *testing.T, ns, source string) string {
	conn := acctest.Connection(t)
	return fmt.Sprintf(`
resource "k8sconnect_object" "namespace" {
  yaml_body = jsonencode({ apiVersion = "v1", kind = "Namespace", metadata = { name = %[2]q } })
  %[1]s
}

data "k8sconnect_helm_template" "remote" {
  name      = "web"
  namespace = %[2]q
  %[3]s
  %[1]s
}

resource "k8sconnect_object" "namespaced" {
  for_each   = data.k8sconnect_helm_template.remote.namespaced
  yaml_body  = each.value
  %[1]s
  depends_on = [k8sconnect_object.namespace]
}
`, conn, ns, source)
}

// Charts from an HTTP repository behind TLS and a password, by a version
// constraint, and from an OCI registry behind a password: the constraint
// resolves to the newest stable match, recorded as chart_version, and the
// objects of that version reach the cluster. A wrong password is refused at
// plan, in words that say so.
func TestAccHelmTemplateFromRepositoryAndRegistry(t *testing.T) {
	ns := acctest.Name("helmremote")
	const user = "chart-reader"
	password := acctest.NewSecretValue("repopw")
	repo := chartrepo.NewRepository(t, chartrepo.Options{TLS: true, Username: user, Password: password.Plain})
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0-rc.1"} {
		repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("greeter", v)))
	}
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: user, Password: password.Plain})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("greeter", "3.0.0")))

	fromRepo := func(pw string) string {
		return fmt.Sprintf(`repository = %q
  chart = "greeter"
  version = ">=1.0.0 <3.0.0"
  repository_username = %q
  repository_password = %q
  repository_ca_file = %q`, repo.URL, user, pw, repo.CAFile)
	}
	fromRegistry := fmt.Sprintf(`chart = %q
  version = "3.0.0"
  repository_username = %q
  repository_password = %q
  repository_ca_file = %q`, "oci://"+registry.Host+"/charts/greeter", user, password.Plain, registry.CAFile)

	chartVersion := func(v string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue("data.k8sconnect_helm_template.remote", tfjsonpath.New("chart_version"), knownvalue.StringExact(v))
	}
	greeting := func(want string) acctest.ClusterCheck {
		return func() error { return acctest.ConfigMapHas(t, ns, "web-greeter", "greeting", want) }
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		Steps: []resource.TestStep{
			{
				Config:      remoteConfig(t, ns, fromRepo("not-the-password")),
				ExpectError: acctest.Words("refused"),
			},
			{
				Config:            remoteConfig(t, ns, fromRepo(password.Plain)),
				ConfigStateChecks: []statecheck.StateCheck{chartVersion("1.1.0"), greeting("hello from greeter 1.1.0")},
			},
			{
				Config:            remoteConfig(t, ns, fromRegistry),
				ConfigStateChecks: []statecheck.StateCheck{chartVersion("3.0.0"), greeting("hello from greeter 3.0.0")},
			},
			{
				Config: fmt.Sprintf("data \"k8sconnect_helm_template\" \"remote\" {\n  name = \"web\"\n  chart = %q\n}\n",
					chartPath(t, "shop")),
			},
		},
	})
}
