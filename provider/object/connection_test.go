package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// execPlugin writes an executable script and returns its path.
func execPlugin(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-credential-plugin")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// execConnection authenticates with an exec plugin only; the token reaches the
// plugin through exec.env, as a cloud CLI's profile or role would.
func execConnection(t *testing.T, command string) string {
	c := localcluster.Shared(t)
	return fmt.Sprintf(`cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    exec = {
      api_version = "client.authentication.k8s.io/v1"
      command     = %q
      args        = ["get-token", "--cluster", "local"]
      env         = { FAKE_PLUGIN_TOKEN = %q }
    }
  }`, c.Host, string(c.CAPEM), command, c.Token)
}

// The plugin insists on its arguments, so a connection that dropped args or
// env would fail to authenticate rather than pass.
func TestAccObject_execCredentialPlugin(t *testing.T) {
	ns, name := acctest.Namespace(t), acctest.Name("cm")
	plugin := execPlugin(t, `[ "$1 $2 $3" = "get-token --cluster local" ] || { echo "unexpected arguments: $*" >&2; exit 2; }
[ -n "$FAKE_PLUGIN_TOKEN" ] || { echo "FAKE_PLUGIN_TOKEN is not set" >&2; exit 2; }
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$FAKE_PLUGIN_TOKEN"
`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.Factories(),
		CheckDestroy:             gone(t, configMaps, ns, name),
		Steps: []resource.TestStep{{
			Config: configMapConfig(execConnection(t, plugin), ns, name, "hello"),
			Check:  configMapHas(t, ns, name, "greeting", "hello"),
		}},
	})
}

// A failing plugin stops the plan, and the error says which command failed. It
// runs through the CLI so the whole output, not only the error, can be searched
// for the token the plugin was given.
func TestAccObject_execPluginFailureFailsPlanWithoutToken(t *testing.T) {
	t.Parallel()
	ns, name := acctest.Namespace(t), acctest.Name("cm")
	plugin := execPlugin(t, "echo 'fake-credential-plugin: session expired, log in again' >&2\nexit 1\n")
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(execConnection(t, plugin), ns, name, "hello"))

	r := w.Plan()
	if r.Err == nil {
		t.Fatalf("plan with a failing credential plugin succeeded:\n%s", r.Output)
	}
	var named bool
	for _, d := range r.Diagnostics {
		if d.Severity == "error" && strings.Contains(d.Detail, "executable "+plugin+" failed with exit code 1") {
			named = true
		}
	}
	if !named {
		t.Errorf("no error names the plugin %s and its exit code:\n%s", plugin, r.Output)
	}
	if token := localcluster.Shared(t).Token; strings.Contains(r.Output, token) {
		i := strings.Index(r.Output, token)
		around := r.Output[max(0, i-300):i] + "<TOKEN>" + r.Output[i+len(token):min(len(r.Output), i+len(token)+100)]
		t.Errorf("the plan output contains the token given to the plugin, here:\n%s", around)
	}
	if obj, err := acctest.Get(t, configMaps, ns, name); err != nil || obj != nil {
		t.Errorf("ConfigMap %s/%s: %v, err %v; the failed plan must create nothing", ns, name, obj, err)
	}
}

// The provider block's cluster_connection refers to something created in the
// same run (here a terraform_data standing in for a cluster module's output):
// the plan shows the object as known after apply, and the apply creates it
// through that connection.
func TestAccObject_providerConnectionUnknownAtPlan(t *testing.T) {
	t.Parallel()
	ns, name := acctest.Namespace(t), acctest.Name("later")
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "k8sconnect" {
  cluster_connection = {
    kubeconfig_file = terraform_data.cluster.output
  }
}

resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: %s, namespace: %s}
    data: {greeting: hello}
  YAML
}
`, localcluster.Shared(t).KubeconfigPath, name, ns))
	w.Cleanup()
	r := w.Plan()
	if r.Err != nil {
		t.Fatalf("plan with the provider's connection unknown: %v\n%s", r.Err, r.Output)
	}
	w.MustApply()
	if err := configMapHas(t, ns, name, "greeting", "hello")(nil); err != nil {
		t.Fatal(err)
	}
	w.MustPlanNoChanges()
}
