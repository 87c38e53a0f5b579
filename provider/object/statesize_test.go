package object_test

import (
	"encoding/json"
	"fmt"
	"maps"
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

	plan := w.Human("plan").Output
	acctest.ExpectPresent(t, "plan output", plan, "k8sconnect_object.settings will be created")
	acctest.ExpectAbsent(t, "plan output", plan, token)
	apply := w.Human("apply", "-auto-approve").Output
	acctest.ExpectPresent(t, "apply output", apply, "Apply complete!")
	acctest.ExpectAbsent(t, "apply output", apply, token)
	acctest.MustGet(t, configMaps, ns, "settings")
	// The state file holds the token in clear (sensitive hides, it does
	// not encrypt): proof that the searches above can see it.
	state, err := os.ReadFile(filepath.Join(w.Dir(), "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	acctest.ExpectPresent(t, "the state file", string(state), c.Token)

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

// stateInstance is what these tests read of a resource instance in a state file.
type stateInstance struct {
	SensitiveAttributes [][]struct{ Type, Value string } `json:"sensitive_attributes"`
	Private             []byte
}

// stateInstances reads the instances a state file records for each resource
// address.
func stateInstances(t *testing.T, stateFile string) map[string][]stateInstance {
	t.Helper()
	raw, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []stateInstance
		}
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state is not JSON: %v", err)
	}
	out := map[string][]stateInstance{}
	for _, r := range st.Resources {
		out[r.Type+"."+r.Name] = append(out[r.Type+"."+r.Name], r.Instances...)
	}
	return out
}

// sensitivePaths reads the sensitive paths that a state file records for each
// resource instance, sorted, as dotted attribute names.
func sensitivePaths(t *testing.T, stateFile string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for address, instances := range stateInstances(t, stateFile) {
		for _, inst := range instances {
			for _, steps := range inst.SensitiveAttributes {
				var names []string
				for _, s := range steps {
					names = append(names, s.Value)
				}
				out[address] = append(out[address], strings.Join(names, "."))
			}
		}
		slices.Sort(out[address])
	}
	return out
}

// Private state keeps only what state lacks. Terraform keeps it base64-encoded
// twice over (the framework encodes each value, Terraform the whole), so each
// byte there costs 1.8 in the state file that is rewritten after every object.
// After an apply an object keeps the fields it owns (without its own
// annotation, which is never projected) and the cluster identities beside
// cluster_uid; the values it applied are the projection in state. A refresh that finds them changed keeps the applied
// values apart, since the ownership messages measure drift against them; the
// next apply drops them again, and counts the revert.
func TestAccObject_privateStateKeepsOnlyWhatStateLacks(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	w := acctest.NewWorkdir(t)
	w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "settings" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: %s}
    data: {mode: fast}
  EOT
  %s
}
`, ns, conn))
	w.MustApply()
	w.Cleanup()
	stateFile := filepath.Join(w.Dir(), "terraform.tfstate")
	// cluster_uid holds kube-system's UID; the CA of the same handshake and
	// kube-root-ca.crt's (here the same CA) are kept apart, for credentials
	// that cannot read kube-system.
	ca := acctest.CAFingerprint(t, localcluster.Shared(t).CAPEM)
	want := map[string]string{"owned_fields": `{"f:data":{"f:mode":{}}}`,
		"cluster_identities": `["tls-ca-sha256:` + ca + `","kube-root-ca-sha256:` + ca + `"]`}
	if got := privateState(t, stateFile, "k8sconnect_object.settings"); !maps.Equal(got, want) {
		t.Errorf("private state after apply = %q, want %q", got, want)
	}

	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "settings", `{"data":{"mode":"slow"}}`)
	if r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color"); r.Err != nil {
		t.Fatalf("refresh: %v\n%s", r.Err, r.Output)
	}
	want["applied_projection"] = `{"data.mode":"fast"}`
	if got := privateState(t, stateFile, "k8sconnect_object.settings"); !maps.Equal(got, want) {
		t.Errorf("private state after a refresh that found drift = %q, want %q", got, want)
	}
	onlyWarning(t, w.Plan(), "Drift: external changes will be reverted", "data.mode: slow -> fast (changed by kubectl-edit)")

	w.MustApply()
	delete(want, "applied_projection")
	// The revert is counted, for the message about a conflict that persists.
	want["revert_streaks"] = `{"data.mode":{"managers":["kubectl-edit"],"count":1}}`
	if got := privateState(t, stateFile, "k8sconnect_object.settings"); !maps.Equal(got, want) {
		t.Errorf("private state after the apply that reverted the drift = %q, want %q", got, want)
	}
	if got := acctest.MustGet(t, configMaps, ns, "settings").Object["data"].(map[string]any)["mode"]; got != "fast" {
		t.Errorf("data.mode after apply = %v, want fast", got)
	}
}

// privateState decodes the private state of a resource instance: Terraform's
// base64 of the framework's JSON object of base64 values.
func privateState(t *testing.T, stateFile, address string) map[string]string {
	t.Helper()
	instances := stateInstances(t, stateFile)[address]
	if len(instances) != 1 {
		t.Fatalf("%d instances of %s in state, want one", len(instances), address)
	}
	var values map[string][]byte
	if err := json.Unmarshal(instances[0].Private, &values); err != nil {
		t.Fatalf("%s: private state is not the framework's JSON: %v", address, err)
	}
	out := map[string]string{}
	for k, v := range values {
		out[k] = string(v)
	}
	return out
}
