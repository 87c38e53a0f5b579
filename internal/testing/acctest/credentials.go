package acctest

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// KubeContext is one context of a kubeconfig a test writes: the cluster it
// reaches and the token it presents (empty: the cluster's admin token).
type KubeContext struct {
	Cluster *localcluster.Cluster
	Token   string
}

// WriteKubeconfig writes a kubeconfig file at path with one context (and a
// cluster and user of the same name) per entry, current being the
// current-context. Tests rewrite it to switch clusters or rotate tokens, as a
// user's tooling would.
func WriteKubeconfig(t testing.TB, path, current string, contexts map[string]KubeContext) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, kc := range contexts {
		token := kc.Token
		if token == "" {
			token = kc.Cluster.Token
		}
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: kc.Cluster.Host, CertificateAuthorityData: kc.Cluster.CAPEM}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = current
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// ShortLivedToken is a real ServiceAccount token with cluster-admin rights,
// bound to a Secret: deleting the Secret revokes it, as an expiry would.
type ShortLivedToken struct {
	Token, Binding, Namespace string
}

// RotatingAccount creates the ServiceAccount "rotator" in ns with
// cluster-admin rights and returns a function that mints a token bound to a
// new Secret of the given name.
func RotatingAccount(t testing.TB, ns string) func(binding string) ShortLivedToken {
	t.Helper()
	ctx := context.Background()
	cs := Clientset(t)
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
	return func(binding string) ShortLivedToken {
		sec, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: binding}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ttl := int64(600)
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "rotator", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &ttl,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: binding, UID: sec.UID},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ShortLivedToken{Token: tr.Status.Token, Binding: binding, Namespace: ns}
	}
}

// Revoke deletes the token's Secret and waits until the API server refuses the
// token (it caches authentications for a few seconds).
func (s ShortLivedToken) Revoke(t testing.TB) {
	t.Helper()
	if err := Clientset(t).CoreV1().Secrets(s.Namespace).Delete(context.Background(), s.Binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	c := localcluster.Shared(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: c.Host, BearerToken: s.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAPEM}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := cs.CoreV1().Namespaces().Get(context.Background(), s.Namespace, metav1.GetOptions{})
		if apierrors.IsUnauthorized(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revoked token still works after 60s (last error: %v)", err)
		}
		time.Sleep(time.Second)
	}
}
