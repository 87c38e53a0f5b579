package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

const rotationResources = `
resource "k8sconnect_object" "cm" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: rotated, namespace: %[1]s}
    data: {greeting: hello}
  EOT
  %[2]s
}

resource "k8sconnect_wait" "cm" {
  resource_ref = k8sconnect_object.cm.resource_ref
  wait_for     = { field = "data.greeting", timeout = "30s" }
}
`

// A rotated short-lived token changes no plan and re-runs no wait, whether the
// credential sits in the provider block (token) or in a kubeconfig file a
// resource names; and it never reaches state. The old token is revoked first,
// so the plan really runs on the new one.
func TestAccObject_credentialRotationPlansNothing(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	mint := acctest.RotatingAccount(t, ns)

	for _, tc := range []struct {
		name  string
		setup func(w *acctest.Workdir, token string) // writes config and credentials for token
	}{
		{"provider token", func(w *acctest.Workdir, token string) {
			w.SetEnv("TF_VAR_token", token)
			w.Write(fmt.Sprintf(`
variable "token" {
  type      = string
  sensitive = true
}
provider "k8sconnect" {
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = var.token
  }
}
`, c.Host, string(c.CAPEM)) + fmt.Sprintf(rotationResources, ns, ""))
		}},
		{"kubeconfig_file", func(w *acctest.Workdir, token string) {
			path := filepath.Join(w.Dir(), "kubeconfig")
			acctest.WriteKubeconfig(t, path, "local", map[string]acctest.KubeContext{"local": {Cluster: c, Token: token}})
			w.Write(fmt.Sprintf(rotationResources, ns, fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", path)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, fresh := mint(acctest.Name("a")), mint(acctest.Name("b"))
			w := acctest.NewWorkdir(t)
			tc.setup(w, old.Token)
			w.MustApply()
			// Each case owns its object: the second case re-applies the same
			// ConfigMap only after the first destroyed it.
			defer func() {
				tc.setup(w, fresh.Token)
				if r := w.Destroy(); r.Err != nil {
					t.Errorf("destroy: %v\n%s", r.Err, r.Output)
				}
			}()
			old.Revoke(t)
			// The revoked token really is dead (else this test proves nothing).
			w.MustFail(w.Plan(), "plan with the revoked token")
			tc.setup(w, fresh.Token)
			r := w.Plan()
			if r.Err != nil {
				t.Fatalf("plan with the rotated token: %v\n%s", r.Err, r.Output)
			}
			if add, change, remove := r.Changes(); add+change+remove != 0 {
				t.Errorf("a rotated token planned changes: +%d ~%d -%d\n%s", add, change, remove, r.Output)
			}
			raw, err := os.ReadFile(filepath.Join(w.Dir(), "terraform.tfstate"))
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range []string{old.Token, fresh.Token} {
				if strings.Contains(string(raw), tok) {
					t.Errorf("state holds a token")
				}
			}
			acctest.ExpectPresent(t, "state", string(raw), "rotated")
		})
	}
}

// A token rotated in a resource's own cluster_connection is copied into its
// state and resource_ref, so Terraform plans an in-place update of the object
// and of the wait (the engine requires the planned value to match the
// configuration). The plan says why and what to do instead; applying it sends
// nothing to the cluster and does not wait again: the wait's condition no
// longer holds here, and waiting would fail.
func TestAccObject_rotatedResourceTokenDoesNotWaitAgain(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	mint := acctest.RotatingAccount(t, ns)
	old, fresh := mint(acctest.Name("a")), mint(acctest.Name("b"))
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	w := acctest.NewWorkdir(t)
	write := func(token string) {
		w.Write(fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: phased, namespace: %[1]s}
    data: {greeting: hello}
  EOT
  ignore_fields = ["data.phase"]
  cluster_connection = {
    host                   = %[2]q
    cluster_ca_certificate = %[3]q
    token                  = %[4]q
  }
}

resource "k8sconnect_wait" "ready" {
  resource_ref = k8sconnect_object.cm.resource_ref
  wait_for     = { field_value = { "data.phase" = "ready" }, timeout = "10s" }
}
`, ns, c.Host, string(c.CAPEM), token))
	}
	write(old.Token)
	acctest.Later(t, configMaps, ns, "phased", time.Minute, func(*unstructured.Unstructured) error {
		acctest.PatchAs(t, "phase-controller", configMaps, ns, "phased", `{"data":{"phase":"ready"}}`)
		return nil
	})
	w.MustApply()
	defer func() {
		write(fresh.Token)
		if r := w.Destroy(); r.Err != nil {
			t.Errorf("destroy: %v\n%s", r.Err, r.Output)
		}
	}()
	acctest.PatchAs(t, "phase-controller", configMaps, ns, "phased", `{"data":{"phase":"draining"}}`)
	old.Revoke(t)
	write(fresh.Token)
	acctest.ClearRequestLog(t, log)
	r := w.Apply()
	if r.Err != nil {
		t.Fatalf("apply with the rotated token waited again (or failed): %v\n%s", r.Err, r.Output)
	}
	if !strings.Contains(r.Output, "Only cluster_connection changed for ConfigMap "+ns+"/phased") ||
		!strings.Contains(r.Output, "provider configuration's cluster_connection") {
		t.Errorf("the plan should say that only the connection changed, and what to do instead:\n%s", r.Output)
	}
	for _, req := range acctest.RequestsTo(t, log, "configmaps", "phased") {
		if !strings.HasPrefix(req, "GET ") && !strings.Contains(req, "dryRun=") {
			t.Errorf("the update of a rotated token sent a write to the cluster: %s", req)
		}
	}
	if add, _, remove := r.Changes(); add+remove != 0 {
		t.Errorf("a rotated token must not replace anything: %s", r.Output)
	}
	if p := w.Plan(); p.Err != nil {
		t.Fatalf("plan: %v\n%s", p.Err, p.Output)
	} else if add, change, remove := p.Changes(); add+change+remove != 0 {
		t.Errorf("plan after the rotation is not empty: +%d ~%d -%d", add, change, remove)
	}
}
