package yamldocs

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// A bundle without a Secret gives empty sensitive and sensitive_keys, never
// null: `for_each = toset(...sensitive_keys)` is the documented recipe, and
// Terraform refuses a null for_each ("Invalid for_each argument").
func TestSecretValuesAreEmptyNotNullWithoutSecrets(t *testing.T) {
	for _, secrets := range []map[string]string{nil, {}} {
		var diags diag.Diagnostics
		bodies, keys := SecretValues(context.Background(), secrets, &diags)
		if diags.HasError() {
			t.Fatal(diags)
		}
		if bodies.IsNull() || bodies.IsUnknown() || len(bodies.Elements()) != 0 {
			t.Errorf("sensitive for %#v = %v, want an empty map", secrets, bodies)
		}
		if keys.IsNull() || keys.IsUnknown() || len(keys.Elements()) != 0 {
			t.Errorf("sensitive_keys for %#v = %v, want an empty list", secrets, keys)
		}
	}
	var diags diag.Diagnostics
	_, keys := SecretValues(context.Background(), map[string]string{"core/Secret/b/x": "", "core/Secret/a/x": ""}, &diags)
	if got := keys.String(); got != `["core/Secret/a/x","core/Secret/b/x"]` {
		t.Errorf("sensitive_keys = %s, want the keys sorted", got)
	}
}
