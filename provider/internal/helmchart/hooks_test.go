package helmchart_test

import (
	"slices"
	"strings"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

func TestHookOfReadsTheAnnotationsAsRoleOfDoes(t *testing.T) {
	doc := `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: " Pre-Install ,post-upgrade"
    helm.sh/hook-weight: " -5 "
    helm.sh/hook-delete-policy: "hook-succeeded, Hook-Failed"
`
	role, err := helmchart.RoleOf(doc)
	if err != nil || role != helmchart.Hook {
		t.Fatalf("RoleOf = %v, %v; want a hook", role, err)
	}
	spec, err := helmchart.HookOf(map[string]string{
		release.HookAnnotation:       " Pre-Install ,post-upgrade",
		release.HookWeightAnnotation: " -5 ",
		release.HookDeleteAnnotation: "hook-succeeded, Hook-Failed",
	})
	if err != nil {
		t.Fatal(err)
	}
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

func TestHookOfDefaultsAndRefusals(t *testing.T) {
	spec, err := helmchart.HookOf(map[string]string{release.HookAnnotation: "pre-install"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []release.HookDeletePolicy{release.HookBeforeHookCreation}; !slices.Equal(spec.DeletePolicies, want) {
		t.Errorf("delete policies %v, want Helm's default %v", spec.DeletePolicies, want)
	}
	_, err = helmchart.HookOf(map[string]string{release.HookAnnotation: "pre-install", release.HookWeightAnnotation: "first"})
	if err == nil || !strings.Contains(err.Error(), `helm.sh/hook-weight "first" is not a whole number`) {
		t.Errorf("a weight that is no number: %v", err)
	}
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
