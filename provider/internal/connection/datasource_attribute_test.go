package connection

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Both schemas must describe the value FromObject reads, or a data source and a
// resource would disagree on what a cluster_connection is.
func TestResourceAndDataSourceAttributesMatchAttrTypes(t *testing.T) {
	want := types.ObjectType{AttrTypes: AttrTypes}
	if got := Attribute(Input, "").GetType(); !got.Equal(want) {
		t.Errorf("resource attribute type = %s, want %s", got, want)
	}
	if got := Attribute(Computed, "").GetType(); !got.Equal(want) {
		t.Errorf("computed resource attribute type = %s, want %s", got, want)
	}
	ds := DataSourceAttribute("how to reach the cluster")
	if got := ds.GetType(); !got.Equal(want) {
		t.Errorf("data source attribute type = %s, want %s", got, want)
	}
	if !ds.IsOptional() || ds.IsRequired() {
		t.Error("data source cluster_connection must be optional")
	}
	res := Attribute(Input, "")
	for name, a := range res.Attributes {
		d := ds.Attributes[name]
		if d == nil {
			t.Errorf("data source attribute lacks %s", name)
			continue
		}
		if a.GetDescription() != d.GetDescription() || a.IsSensitive() != d.IsSensitive() {
			t.Errorf("%s differs: resource (%q, sensitive=%v), data source (%q, sensitive=%v)",
				name, a.GetDescription(), a.IsSensitive(), d.GetDescription(), d.IsSensitive())
		}
	}
	for _, secret := range []string{"token", "client_key", "kubeconfig"} {
		if !ds.Attributes[secret].IsSensitive() || !res.Attributes[secret].IsSensitive() {
			t.Errorf("%s must stay sensitive in both schemas", secret)
		}
	}
}
