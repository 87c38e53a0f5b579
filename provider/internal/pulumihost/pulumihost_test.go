package pulumihost

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

func testHost() *Host {
	h := New(Options{ResourceNames: map[string]string{"k8sconnect_object": "KubernetesObject", "k8sconnect_wait": "Wait"}})
	h.learn(map[string]schema.Attribute{
		"ignore_fields": schema.ListAttribute{},
		"wait_for": schema.SingleNestedAttribute{Attributes: map[string]schema.Attribute{
			"field_value": schema.MapAttribute{}, "rollout": schema.BoolAttribute{},
		}},
	})
	return h
}

func TestTranslateSpeaksPulumiNames(t *testing.T) {
	h := testHost()
	for in, want := range map[string]string{
		"add to ignore_fields: [\"spec.replicas\"]":          "add to ignoreFields: [\"spec.replicas\"]",
		"ignore_fields[0] is invalid":                        "ignoreFields[0] is invalid",
		"set wait_for.field_value or wait_for.rollout":       "set waitFor.fieldValue or waitFor.rollout",
		"two k8sconnect_object resources; a k8sconnect_wait": "two KubernetesObject resources; a Wait",
		// Not ours: environment variables, Kubernetes fields, unknown words.
		"TF_LOG=INFO, spec.template, my_ignore_fields_x, k8sconnect.io/owned-by": "TF_LOG=INFO, spec.template, my_ignore_fields_x, k8sconnect.io/owned-by",
	} {
		if got := h.Translate(in); got != want {
			t.Errorf("Translate(%q) = %q, want %q", in, got, want)
		}
	}
	if got := CamelCase("managed_state_projection"); got != "managedStateProjection" {
		t.Errorf("CamelCase = %q", got)
	}
}

func TestSpeakSaysEachWarningOnce(t *testing.T) {
	h := testHost()
	first := diag.Diagnostics{
		diag.NewWarningDiagnostic("Drift", "set back; add to ignore_fields"),
		diag.NewAttributeWarningDiagnostic(path.Root("yaml_body"), "Drift", "set back; add to ignore_fields"),
	}
	h.speak(&first)
	if len(first) != 2 || first[0].Detail() != "set back; add to ignoreFields" {
		t.Fatalf("first plan: %v", first)
	}
	// The engine plans the same resource again in the same run.
	again := diag.Diagnostics{
		diag.NewWarningDiagnostic("Drift", "set back; add to ignore_fields"),
		diag.NewErrorDiagnostic("Apply failed", "ignore_fields"),
		diag.NewErrorDiagnostic("Apply failed", "ignore_fields"),
		diag.NewWarningDiagnostic("Drift", "another object"),
	}
	h.speak(&again)
	if len(again) != 3 || again[0].Severity() != diag.SeverityError || again[2].Detail() != "another object" {
		t.Fatalf("second plan: want both errors and only the new warning, have %v", again)
	}
}
