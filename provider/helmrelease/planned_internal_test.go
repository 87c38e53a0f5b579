package helmrelease

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection/connectiontest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// What an apply compares with its plan, against a real server: an object
// rendered otherwise whose dry run stores other values is named with the
// field; one rendered otherwise that stores what was planned (only Helm's
// marks differ, which no projection shows) passes; an object rendered now
// and not planned, and one planned and no longer rendered, are named; one
// whose projection the plan did not know is not compared.
func TestDifferencesFromThePlan(t *testing.T) {
	ns := "default" // dry runs only: nothing is written
	c := connectiontest.Local(t)
	id := ns + "/app"
	cm := func(name, release string, data map[string]any) piece {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns}, "data": data}}
		obj.SetAnnotations(map[string]string{annotationReleaseName: release, annotationReleaseNS: ns})
		return piece{key: "core/ConfigMap/" + ns + "/" + name, obj: obj, red: sensitive.New(id, nil)}
	}
	known := func(p projection.Projection) attr.Value { return objectset.ProjectionValue(p) }

	changed, changedBefore := cm("changed", "app", map[string]any{"x": "1"}), cm("changed", "app", map[string]any{"x": "0"})
	marks, marksBefore := cm("marks", "app", map[string]any{"y": "1"}), cm("marks", "other", map[string]any{"y": "1"})
	same := cm("same", "app", map[string]any{"z": "1"})
	added := cm("added", "app", map[string]any{"a": "1"})
	later := cm("later", "app", map[string]any{"b": "2"})
	rd := &rendered{objects: []piece{changed, marks, same, added, later}}
	objects := types.MapValueMust(objectset.ProjectionType, map[string]attr.Value{
		changed.key:                      known(projection.Projection{"data.x": "0"}),
		marks.key:                        known(projection.Projection{"data.y": "1"}),
		same.key:                         known(projection.Projection{"data.z": "1"}),
		later.key:                        types.MapUnknown(types.StringType),
		"core/ConfigMap/" + ns + "/gone": known(projection.Projection{"data.c": "3"}),
	})
	bodies := map[string]string{changed.key: objectset.BodyHash(changedBefore.obj, changedBefore.red), marks.key: objectset.BodyHash(marksBefore.obj, marksBefore.red), same.key: objectset.BodyHash(same.obj, same.red)}

	got := differences(context.Background(), c, rd, objects, bodies, func(string) *fieldpath.Set { return nil })
	want := []string{
		changed.key + `: data.x is "1" now, planned "0"`,
		added.key + ": rendered now, not in the plan",
		"core/ConfigMap/" + ns + "/gone: in the plan, no longer rendered",
	}
	if !slices.Equal(got, want) {
		t.Errorf("differences:\n%q\nwant\n%q", got, want)
	}

	// Without the plan's bodies (an install), only which objects are
	// rendered is compared.
	got = differences(context.Background(), c, rd, objects, nil, nil)
	if !slices.Equal(got, want[1:]) {
		t.Errorf("differences without the plan's bodies:\n%q\nwant\n%q", got, want[1:])
	}
}

func TestChangedFieldsNamesTheFirstFew(t *testing.T) {
	planned := projection.Projection{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
	now := projection.Projection{"a": "1", "b": "two", "d": "4", "e": "five", "f": "6", "g": "7"}
	got := changedFields(planned, now)
	want := []string{`b is "two" now, planned "2"`, `c is no longer set, planned "3"`, `e is "five" now, planned "5"`,
		"and 2 more field(s)"}
	if !slices.Equal(got, want) {
		t.Errorf("changedFields = %q, want %q", got, want)
	}
	if got := changedFields(planned, planned); len(got) != 0 {
		t.Errorf("changedFields of equal projections = %q", got)
	}
}
