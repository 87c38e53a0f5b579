package acctest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
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

// TokenKubeconfig is a kubeconfig file of one context, "local", that reaches
// a cluster with a token the test changes: Write rewrites it, as a user's
// tooling does when a token expires or is rotated.
type TokenKubeconfig struct {
	Path    string
	t       testing.TB
	cluster *localcluster.Cluster
}

// NewTokenKubeconfig writes a TokenKubeconfig in a temporary directory of t,
// reaching c with token ("": the cluster's admin token).
func NewTokenKubeconfig(t testing.TB, c *localcluster.Cluster, token string) *TokenKubeconfig {
	t.Helper()
	k := &TokenKubeconfig{Path: filepath.Join(t.TempDir(), "config"), t: t, cluster: c}
	k.Write(token)
	return k
}

// Write rewrites the file with token ("": the cluster's admin token).
func (k *TokenKubeconfig) Write(token string) {
	k.t.Helper()
	WriteKubeconfig(k.t, k.Path, "local", map[string]KubeContext{"local": {Cluster: k.cluster, Token: token}})
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

// NamespaceAccount creates ServiceAccount name in namespace ns of cluster c
// (the namespace too, if c lacks it), bound by a Role of the same name to
// rules in that namespace only, as a CI pipeline's account usually is, and
// returns a token for it from the TokenRequest API (valid for an hour).
//
// It checks that the token really may not read namespace kube-system (403),
// so a test of what such an account cannot see cannot pass vacuously.
func NamespaceAccount(t testing.TB, c *localcluster.Cluster, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(c.RESTConfig())
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ttl := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token
	as := kubernetes.NewForConfigOrDie(&rest.Config{Host: c.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAPEM}})
	if _, err := as.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("ServiceAccount %s/%s: reading namespace kube-system gave %v, want 403 Forbidden", ns, name, err)
	}
	// The authorizer sees a new binding a moment later; wait until the
	// first rule is granted, so a refusal in the test is the binding's
	// scope and never its absence.
	r := rules[0]
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: r.Resources[0]}}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, err := as.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ServiceAccount %s/%s: its Role is not in effect after 30s (%v)", ns, name, err)
		}
	}
	return token
}

// CAFingerprint is the lower-case hex SHA-256 of the first certificate in a
// PEM bundle, as a cluster identity taken from a CA records it.
func CAFingerprint(t testing.TB, bundle []byte) string {
	t.Helper()
	block, _ := pem.Decode(bundle)
	if block == nil {
		t.Fatal("CAFingerprint: no PEM block")
	}
	sum := sha256.Sum256(block.Bytes)
	return hex.EncodeToString(sum[:])
}

// KubeSystemUID is the UID of namespace kube-system in c: the cluster
// identity k8sconnect records for credentials that may read it.
func KubeSystemUID(t testing.TB, c *localcluster.Cluster) string {
	t.Helper()
	ns, err := kubernetes.NewForConfigOrDie(c.RESTConfig()).CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}
