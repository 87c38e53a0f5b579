package helmrelease

import (
	"slices"
	"testing"
	"time"

	release "helm.sh/helm/v4/pkg/release/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

func testHook(apiVersion, kind, namespace, name string, weight int, events ...release.HookEvent) hook {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return hook{piece: piece{key: apiVersion + "/" + kind + "/" + namespace + "/" + name, obj: obj}, events: events, weight: weight}
}

// Weight first, then name, then kind in install order, kinds Helm does not
// know after those it knows and among themselves by name; a hook of
// another event is not run.
func TestHooksOfRunInHelmsOrder(t *testing.T) {
	pre := release.HookPreInstall
	hooks := []hook{
		testHook("example.com/v1", "Widget", "ns", "a", 0, pre),
		testHook("example.com/v1", "Gadget", "ns", "a", 0, pre),
		testHook("v1", "ConfigMap", "ns", "a", 0, pre),
		testHook("v1", "ServiceAccount", "ns", "b", 0, pre),
		testHook("batch/v1", "Job", "ns", "a", -1, pre),
		testHook("v1", "Secret", "ns", "a", 0, pre),
		testHook("v1", "ConfigMap", "ns", "0", 0, release.HookPostInstall),
		testHook("v1", "ConfigMap", "ns", "z", -1, pre),
	}
	var got []string
	for _, h := range hooksOf(hooks, pre) {
		got = append(got, h.obj.GetKind()+"/"+h.obj.GetName())
	}
	want := []string{"Job/a", "ConfigMap/z", "Secret/a", "ConfigMap/a", "Gadget/a", "Widget/a", "ServiceAccount/b"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// An object with Helm's marks is the release's they name; an unmarked one
// is the release's only if one of its records ran a hook of that identity
// when the object was created.
func TestHookReleaseMadeOnlyItsOwn(t *testing.T) {
	id := manifest.Identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "shared"}
	ran := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := &release.Release{Name: "one", Namespace: "apps", Hooks: []*release.Hook{{
		Name: "shared", Kind: "ConfigMap", Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
		LastRun: release.HookExecution{StartedAt: ran, CompletedAt: ran.Add(time.Second)},
	}}}
	owner := hookRelease{name: "one", namespace: "apps", history: []*release.Release{rec}}
	live := func(annotations map[string]string, created time.Time) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		obj.SetAnnotations(annotations)
		obj.SetCreationTimestamp(metav1.NewTime(created))
		return obj
	}
	marks := func(ns, name string) map[string]string {
		return map[string]string{annotationReleaseName: name, annotationReleaseNS: ns}
	}
	for _, c := range []struct {
		why  string
		obj  *unstructured.Unstructured
		id   manifest.Identity
		ours bool
	}{
		{"marked as this release's", live(marks("apps", "one"), time.Now()), id, true},
		{"marked as another release's", live(marks("apps", "two"), ran), id, false},
		{"marked as a release of the same name elsewhere", live(marks("other", "one"), ran), id, false},
		{"unmarked, made by the recorded run", live(nil, ran.Add(time.Second)), id, true},
		{"unmarked, made long after the recorded run", live(nil, ran.Add(time.Hour)), id, false},
		{"unmarked, in a namespace the record's hook does not run in", live(nil, ran),
			manifest.Identity{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other", Name: "shared"}, false},
		{"unmarked, of another kind", live(nil, ran),
			manifest.Identity{APIVersion: "v1", Kind: "Secret", Namespace: "apps", Name: "shared"}, false},
	} {
		if _, ours := owner.made(c.obj, c.id); ours != c.ours {
			t.Errorf("%s: made = %v, want %v", c.why, ours, c.ours)
		}
	}
}
