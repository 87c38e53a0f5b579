package manifestset

import (
	"slices"
	"testing"
)

// The ApplySet id is kubectl's: the value below is what kubectl writes on
// the Secret parent my-set in namespace test (its own apply tests hold it),
// so kubectl and this set name the same ApplySet for the same parent.
func TestApplySetIDIsKubectls(t *testing.T) {
	p := parent{Kind: "Secret", Namespace: "test", Name: "my-set"}
	if got, want := p.applySetID(), "applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1"; got != want {
		t.Errorf("applySetID of Secret test/my-set = %q, want kubectl's %q", got, want)
	}
}

// The parent's annotations list kinds and namespaces as kubectl writes them:
// Kind.group sorted, the core group bare; namespaces sorted, the parent's own
// left out.
func TestParentAnnotationsAreKubectls(t *testing.T) {
	keys := []string{"apps/Deployment/web/api", "core/ConfigMap/web/settings", "core/ConfigMap/other/x",
		"rbac.authorization.k8s.io/ClusterRole/reader", "core/Namespace/web"}
	if got, want := groupKindsOf(keys), []string{"ClusterRole.rbac.authorization.k8s.io", "ConfigMap", "Deployment.apps", "Namespace"}; !slices.Equal(got, want) {
		t.Errorf("groupKindsOf = %v, want %v", got, want)
	}
	if got, want := namespacesOf(keys, "web"), []string{"other"}; !slices.Equal(got, want) {
		t.Errorf("namespacesOf = %v, want %v", got, want)
	}
}
