package manifestset

import (
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
)

// The ApplySet id is kubectl's: the value below is what kubectl writes on
// the Secret parent my-set in namespace test (its own apply tests hold it),
// so kubectl and this set name the same ApplySet for the same parent.
func TestApplySetIDIsKubectls(t *testing.T) {
	p := parent{APIVersion: "v1", Kind: "Secret", Namespace: "test", Name: "my-set"}
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

// An update leaves alone exactly the members whose planned element is
// known and equal to state's; a drifted or deleted member (unknown), a
// changed one, a new one, and every member when yaml_body_wo_revision
// changes are sent.
func TestUnchangedMembersAreThoseThePlanFoundAsLeft(t *testing.T) {
	value := func(v string) attr.Value {
		return types.MapValueMust(types.StringType, map[string]attr.Value{"data.greeting": types.StringValue(v)})
	}
	unknown := types.MapUnknown(types.StringType)
	ms := &members{all: []member{{key: "core/ConfigMap/ns/same"}, {key: "core/ConfigMap/ns/changed"},
		{key: "core/ConfigMap/ns/drifted"}, {key: "core/ConfigMap/ns/new"}}}
	state := &model{Objects: types.MapValueMust(objectset.ProjectionType, map[string]attr.Value{
		"core/ConfigMap/ns/same": value("a"), "core/ConfigMap/ns/changed": value("a"), "core/ConfigMap/ns/drifted": value("a")}),
		YAMLBodyWORevision: types.Int64Null()}
	plan := &model{Objects: types.MapValueMust(objectset.ProjectionType, map[string]attr.Value{
		"core/ConfigMap/ns/same": value("a"), "core/ConfigMap/ns/changed": value("b"), "core/ConfigMap/ns/drifted": unknown,
		"core/ConfigMap/ns/new": value("a")}), YAMLBodyWORevision: types.Int64Null()}
	if got := unchangedMembers(plan, state, ms); len(got) != 1 || !got["core/ConfigMap/ns/same"] {
		t.Errorf("unchanged members = %v, want only core/ConfigMap/ns/same", got)
	}
	plan.YAMLBodyWORevision = types.Int64Value(2)
	if got := unchangedMembers(plan, state, ms); len(got) != 0 {
		t.Errorf("with a new yaml_body_wo_revision every member is sent; unchanged = %v", got)
	}
}
