package object_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A token written inline in cluster_connection is copied into resource_ref,
// whose copy is sensitive as a whole (connection.CopyAttribute): the token
// stays out of plan, apply and show output, and each instance's state lists
// the copy as one sensitive path instead of one per credential field. Those
// paths are most of an object's state when the connection is inline, and
// Terraform rewrites the whole state file after each object it applies, so
// they set what a run of a thousand objects costs. The exact list is held
// here so that marking the copy's fields one by one again fails.
func TestAccObject_inlineTokenStaysHiddenInOneSensitivePath(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	token := acctest.SecretValue{Plain: c.Token}

	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "settings" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %[1]s}
    data: {mode: fast}
  EOT
  cluster_connection = {
    host                   = %[2]q
    cluster_ca_certificate = %[3]q
    token                  = %[4]q
  }
}

resource "k8sconnect_wait" "mode" {
  resource_ref = k8sconnect_object.settings.resource_ref
  wait_for     = { field = "data.mode", timeout = "30s" }
}
`, ns, c.Host, string(c.CAPEM), c.Token))
	w.Cleanup()

	human := func(cmd ...string) string {
		t.Helper()
		r := w.Run(append(cmd, "-input=false", "-no-color")...)
		if r.Err != nil {
			t.Fatalf("%s %s: %v\n%s", acctest.Engine(), cmd[0], r.Err, r.Output)
		}
		return r.Output
	}
	acctest.ExpectAbsent(t, "plan output", human("plan"), token)
	acctest.ExpectAbsent(t, "apply output", human("apply", "-auto-approve"), token)
	acctest.MustGet(t, configMaps, ns, "settings")

	show := w.Run("show", "-no-color")
	if show.Err != nil {
		t.Fatalf("show: %v\n%s", show.Err, show.Output)
	}
	acctest.ExpectAbsent(t, "show output", show.Output, token)
	// show prints every attribute of state; the copy is hidden whole.
	if !strings.Contains(show.Output, "cluster_connection = (sensitive value)") {
		t.Errorf("show output does not hide resource_ref.cluster_connection as a whole:\n%s", show.Output)
	}

	want := map[string][]string{
		"k8sconnect_object.settings": {
			"cluster_connection.client_key", "cluster_connection.kubeconfig", "cluster_connection.proxy_url",
			"cluster_connection.token", "resource_ref.cluster_connection",
		},
		"k8sconnect_wait.mode": {"resource_ref.cluster_connection"},
	}
	got := sensitivePaths(t, filepath.Join(w.Dir(), "terraform.tfstate"))
	for address, paths := range want {
		if !slices.Equal(got[address], paths) {
			t.Errorf("%s: sensitive paths in state = %q, want %q", address, got[address], paths)
		}
	}
	w.MustPlanNoChanges()
}

// sensitivePaths reads the sensitive paths that a state file records for each
// resource instance, sorted, as dotted attribute names.
func sensitivePaths(t *testing.T, stateFile string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				SensitiveAttributes [][]struct{ Type, Value string } `json:"sensitive_attributes"`
			}
		}
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state is not JSON: %v", err)
	}
	out := map[string][]string{}
	for _, r := range st.Resources {
		for _, inst := range r.Instances {
			address := r.Type + "." + r.Name
			for _, steps := range inst.SensitiveAttributes {
				var names []string
				for _, s := range steps {
					names = append(names, s.Value)
				}
				out[address] = append(out[address], strings.Join(names, "."))
			}
			slices.Sort(out[address])
		}
	}
	return out
}
