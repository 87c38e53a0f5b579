package acctest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// TwoClusters is a kubeconfig file with two contexts: "first", the current
// one, on the shared cluster, and "second" on a cluster of the test's own.
type TwoClusters struct {
	First, Second *localcluster.Cluster
	Kubeconfig    string // the file's path
	// FirstToken and SecondToken are what the contexts present: the
	// namespace account's token in each cluster, or "" for the admin's.
	FirstToken, SecondToken string

	swapped bool
}

// TwoClusterKubeconfig gives a test of a switched cluster what it switches
// between: the shared cluster, a second one started for the test alone, and
// a kubeconfig with a context on each. With rules, both contexts present
// ServiceAccount "ci" of namespace ns in their own cluster, bound to rules
// there (see NamespaceAccount), as a pipeline's account that exists in both
// would; without, each cluster's admin token, and ns is not used.
func TwoClusterKubeconfig(t testing.TB, ns string, rules ...rbacv1.PolicyRule) *TwoClusters {
	t.Helper()
	first := localcluster.Shared(t)
	second, err := localcluster.Start(context.Background(), localcluster.Options{})
	if err != nil {
		t.Fatalf("starting a second cluster: %v", err)
	}
	t.Cleanup(func() { _ = second.Stop() })
	c := &TwoClusters{First: first, Second: second, Kubeconfig: filepath.Join(t.TempDir(), "config")}
	if len(rules) > 0 {
		c.FirstToken = NamespaceAccount(t, first, ns, "ci", rules...)
		c.SecondToken = NamespaceAccount(t, second, ns, "ci", rules...)
	}
	c.write(t)
	return c
}

// Swap rewrites the kubeconfig with the two contexts' clusters (and their
// tokens) exchanged, as an edit of the file under an unchanged context name
// would leave it; a second Swap puts them back.
func (c *TwoClusters) Swap(t testing.TB) {
	t.Helper()
	c.swapped = !c.swapped
	c.write(t)
}

func (c *TwoClusters) write(t testing.TB) {
	t.Helper()
	first := KubeContext{Cluster: c.First, Token: c.FirstToken}
	second := KubeContext{Cluster: c.Second, Token: c.SecondToken}
	if c.swapped {
		first, second = second, first
	}
	WriteKubeconfig(t, c.Kubeconfig, "first", map[string]KubeContext{"first": first, "second": second})
}

// SwitchedClusterFixture is what a test of a switched cluster starts from:
// TwoClusterKubeconfig's clusters with a namespace account bound to rules in
// namespace ns of each, a name for an object to create (object) and the name
// of a ConfigMap, made here by another manager, to patch (patched).
func SwitchedClusterFixture(t testing.TB, rules rbacv1.PolicyRule, object, patched string) (ns string, clusters *TwoClusters, name, target string) {
	t.Helper()
	ns = Namespace(t)
	clusters = TwoClusterKubeconfig(t, ns, rules)
	name, target = Name(object), Name(patched)
	ApplyAs(t, "someone-else", schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, fmt.Sprintf(
		"{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {a: b}}", target, ns))
	return ns, clusters, name, target
}
