package object_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/k8sconnect/k8sconnect/provider/acctest"
	"github.com/k8sconnect/k8sconnect/provider/localcluster"
)

// shortLivedToken is a real, short-lived ServiceAccount token with
// cluster-admin rights, bound to a Secret: deleting the Secret revokes it, as
// an expiry would.
type shortLivedToken struct {
	token, binding string
}

func newRotatingAccount(t *testing.T, ns string) func(name string) shortLivedToken {
	t.Helper()
	ctx := context.Background()
	cs := acctest.Clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "rotator"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "rotator-" + ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "rotator", Namespace: ns}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	return func(name string) shortLivedToken {
		sec, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ttl := int64(600)
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "rotator", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &ttl,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: name, UID: sec.UID},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return shortLivedToken{token: tr.Status.Token, binding: name}
	}
}

func (s shortLivedToken) revoke(t *testing.T, ns string) {
	t.Helper()
	if err := acctest.Clientset(t).CoreV1().Secrets(ns).Delete(context.Background(), s.binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server caches authentications for a few seconds: wait until
	// the token is refused.
	c := localcluster.Shared(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: c.Host, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAPEM}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if apierrors.IsUnauthorized(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revoked token still works after 60s (last error: %v)", err)
		}
		time.Sleep(time.Second)
	}
}

func writeTokenKubeconfig(t *testing.T, path, token string) {
	t.Helper()
	c := localcluster.Shared(t)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAPEM}
	cfg.AuthInfos["rotator"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "rotator"}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

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
	mint := newRotatingAccount(t, ns)

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
			writeTokenKubeconfig(t, path, token)
			w.Write(fmt.Sprintf(rotationResources, ns, fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", path)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, fresh := mint(acctest.Name("a")), mint(acctest.Name("b"))
			w := acctest.NewWorkdir(t)
			tc.setup(w, old.token)
			w.MustApply()
			// Each case owns its object: the second case re-applies the same
			// ConfigMap only after the first destroyed it.
			defer func() {
				tc.setup(w, fresh.token)
				if r := w.Destroy(); r.Err != nil {
					t.Errorf("destroy: %v\n%s", r.Err, r.Output)
				}
			}()
			old.revoke(t, ns)
			// The revoked token really is dead (else this test proves nothing).
			w.MustFail(w.Plan(), "plan with the revoked token")
			tc.setup(w, fresh.token)
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
			for _, tok := range []string{old.token, fresh.token} {
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
// and of the wait; applying it sends nothing to the cluster and does not wait
// again: the wait's condition no longer holds here, and waiting would fail.
func TestAccObject_rotatedResourceTokenDoesNotWaitAgain(t *testing.T) {
	ns := acctest.Namespace(t)
	c := localcluster.Shared(t)
	mint := newRotatingAccount(t, ns)
	old, fresh := mint(acctest.Name("a")), mint(acctest.Name("b"))
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
	write(old.token)
	acctest.Later(t, configMaps, ns, "phased", time.Minute, func(*unstructured.Unstructured) error {
		acctest.PatchAs(t, "phase-controller", configMaps, ns, "phased", `{"data":{"phase":"ready"}}`)
		return nil
	})
	w.MustApply()
	defer func() {
		write(fresh.token)
		if r := w.Destroy(); r.Err != nil {
			t.Errorf("destroy: %v\n%s", r.Err, r.Output)
		}
	}()
	acctest.PatchAs(t, "phase-controller", configMaps, ns, "phased", `{"data":{"phase":"draining"}}`)
	old.revoke(t, ns)
	write(fresh.token)
	r := w.Apply()
	if r.Err != nil {
		t.Fatalf("apply with the rotated token waited again (or failed): %v\n%s", r.Err, r.Output)
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
