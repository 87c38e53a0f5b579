package patch_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider"
)

// An engine that does not announce write-only attributes is told, for each
// write-only patch input, the versions of Terraform and OpenTofu that take it
// and the input kept in state to use instead; one that announces them is not.
func TestWriteOnlyPatchOnOlderEngines(t *testing.T) {
	for _, tc := range []struct{ attr, text, twin string }{
		{"patch_wo", "data: {password: cGF0Y2g=}", "by patch ("},
		{"merge_patch_wo", `{"data": {"password": "bWVyZ2U="}}`, "by merge_patch ("},
		{"json_patch_wo", `[{"op": "add", "path": "/data/password", "value": "anNvbg=="}]`, "by json_patch ("},
	} {
		config := map[string]string{tc.attr: tc.text}
		old := acctest.ValidationErrors(t, provider.TypeName+"_patch", config, nil)
		for _, want := range []string{tc.attr + " needs Terraform 1.11 or OpenTofu 1.11", "OpenTofu 1.11 or later", tc.twin} {
			if !strings.Contains(old, want) {
				t.Errorf("%s: an older engine's error should say %q:\n%s", tc.attr, want, old)
			}
		}
		current := acctest.ValidationErrors(t, provider.TypeName+"_patch", config,
			&tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true})
		// take_ownership, left null, is the one complaint of an engine that
		// takes write-only attributes.
		if strings.Contains(current, "1.11") {
			t.Errorf("%s: an engine that takes write-only attributes is refused:\n%s", tc.attr, current)
		}
	}
}
