package waiting

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Waits on a Secret's data print neither the value in summaries nor in the
// timeout explanation.
func TestSecretFieldWaitsHideTheValue(t *testing.T) {
	const value = "c3VwZXItc2VjcmV0LXRva2Vu"
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "token"}, "data": map[string]any{"token": value}}}
	red := sensitive.New("wait-id", nil)
	field := Spec{Field: objectpath.MustParse("data.token"), Redactor: red}
	st := field.Evaluate(secret)
	if !st.Met || strings.Contains(st.Summary, value) || !strings.Contains(st.Summary, "data.token = (sensitive, hmac-sha256:") {
		t.Errorf("field wait summary: %+v", st)
	}
	fv, _ := NewFieldValues(map[string]string{"data.token": "d3Jvbmc="})
	wrong := Spec{FieldValues: fv, Redactor: red}
	st = wrong.Evaluate(secret)
	if st.Met || strings.Contains(st.Summary, value) || strings.Contains(st.Summary, "d3Jvbmc=") || !strings.Contains(st.Summary, "data.token") {
		t.Errorf("field_value wait summary: %+v", st)
	}
	if got := Explain(wrong, Result{Object: secret, State: st}, nil); strings.Contains(got, value) {
		t.Errorf("explanation shows the value:\n%s", got)
	}
	// A ConfigMap's values still show.
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"token": "plain"}}}
	if st := (Spec{Field: objectpath.MustParse("data.token"), Redactor: red}).Evaluate(cm); st.Summary != "data.token = plain" {
		t.Errorf("ConfigMap summary %q", st.Summary)
	}
}

func TestDescribeHidesAWantedSecretValue(t *testing.T) {
	fv, _ := NewFieldValues(map[string]string{"data.token": "d2FudGVk", "type": "Opaque"})
	s := Spec{FieldValues: fv, Redactor: sensitive.New("id", nil), APIVersion: "v1", Kind: "Secret"}
	if d := s.Describe(); strings.Contains(d, "d2FudGVk") || !strings.Contains(d, `type = "Opaque"`) {
		t.Errorf("Describe = %s", d)
	}
}
