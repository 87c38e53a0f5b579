package object_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider"
)

// An engine that does not announce write-only attributes (Terraform before
// 1.11, OpenTofu before 1.11) is told, for yaml_body_wo, the versions of both
// that take it; one that announces them is not. The request is the one such
// an engine sends: ValidateResourceConfig without client capabilities.
func TestWriteOnlyBodyOnOlderEngines(t *testing.T) {
	body := map[string]string{"yaml_body_wo": "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\n"}
	old := acctest.ValidationErrors(t, provider.TypeName+"_object", body, nil)
	for _, want := range []string{"Terraform 1.11", "OpenTofu 1.11", "yaml_body"} {
		if !strings.Contains(old, want) {
			t.Errorf("an older engine's error should name %q:\n%s", want, old)
		}
	}
	current := acctest.ValidationErrors(t, provider.TypeName+"_object", body,
		&tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true})
	if current != "" {
		t.Errorf("an engine that takes write-only attributes is refused:\n%s", current)
	}
}
