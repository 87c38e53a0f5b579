package helmchart_test

import (
	"slices"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

func TestHookOfReadsTheAnnotationsAsRoleOfDoes(t *testing.T) {
	doc := `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: " Pre-Install ,post-upgrade"
    helm.sh/hook-weight: "-5"
    helm.sh/hook-delete-policy: "hook-succeeded, Hook-Failed"
`
	role, err := helmchart.RoleOf(doc)
	if err != nil || role != helmchart.Hook {
		t.Fatalf("RoleOf = %v, %v; want a hook", role, err)
	}
	spec := helmchart.HookOf(map[string]string{
		release.HookAnnotation:       " Pre-Install ,post-upgrade",
		release.HookWeightAnnotation: "-5",
		release.HookDeleteAnnotation: "hook-succeeded, Hook-Failed",
	})
	if want := []release.HookEvent{release.HookPreInstall, release.HookPostUpgrade}; !slices.Equal(spec.Events, want) {
		t.Errorf("events %v, want %v", spec.Events, want)
	}
	if spec.Weight != -5 {
		t.Errorf("weight %d, want -5", spec.Weight)
	}
	if want := []release.HookDeletePolicy{release.HookSucceeded, release.HookFailed}; !slices.Equal(spec.DeletePolicies, want) {
		t.Errorf("delete policies %v, want %v", spec.DeletePolicies, want)
	}
}

// HookOf reads a weight and delete policies as Helm's own manifest sorter
// reads them, whatever their text: a weight Helm cannot read is 0 (it runs
// the hook, in another place than the chart may have meant), and an
// annotation present but empty is no default.
func TestHookOfReadsWeightsAndPoliciesAsHelm(t *testing.T) {
	weights := []string{"-5", "+3", "007", " 5", "5 ", "1.5", "first", "", "99999999999999999999"}
	policies := []string{"hook-succeeded", " Hook-Failed , before-hook-creation", "hook-succeeded,", "", "whenever"}
	for _, w := range weights {
		for _, p := range append(policies, "(absent)") {
			annotations := map[string]string{release.HookAnnotation: "pre-install", release.HookWeightAnnotation: w}
			if p != "(absent)" {
				annotations[release.HookDeleteAnnotation] = p
			}
			helm := helmReads(t, annotations)
			got := helmchart.HookOf(annotations)
			if got.Weight != helm.Weight {
				t.Errorf("weight %q: %d, helm reads %d", w, got.Weight, helm.Weight)
			}
			want := helm.DeletePolicies
			if len(want) == 0 { // what helm's hook run puts there before it runs one
				want = []release.HookDeletePolicy{release.HookBeforeHookCreation}
			}
			if !slices.Equal(got.DeletePolicies, want) {
				t.Errorf("delete policy %s: %q, helm runs %q", p, got.DeletePolicies, want)
			}
		}
	}
}

// helmReads is the hook Helm's manifest sorter makes of a ConfigMap with annotations.
func helmReads(t *testing.T, annotations map[string]string) *release.Hook {
	t.Helper()
	doc, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "h", "annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _, err := releaseutil.SortManifests(map[string]string{"c/templates/h.yaml": string(doc)}, nil, releaseutil.InstallOrder)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("helm sorted %s into %d hooks: %v", doc, len(hooks), err)
	}
	return hooks[0]
}

func TestRoleOfSkipsADocumentWithAnEventHelmDoesNotKnow(t *testing.T) {
	for annotation, want := range map[string]helmchart.Role{
		"pre-install,":         helmchart.Skipped, // an empty event is unknown to Helm too
		"pre-install,whenever": helmchart.Skipped,
		"test":                 helmchart.TestHook,
		"test,PRE-UPGRADE":     helmchart.Hook,
	} {
		doc := "kind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: " + `"` + annotation + `"` + "\n"
		if got, err := helmchart.RoleOf(doc); err != nil || got != want {
			t.Errorf("RoleOf(%q) = %v, %v; want %v", annotation, got, err, want)
		}
	}
}
