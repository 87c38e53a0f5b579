package yamldocs

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// The data sources that hand out bodies keep every core v1 Secret apart, in a
// map of its own marked sensitive, so that no plan prints one. The plain maps
// stay plain: Terraform refuses a sensitive value as a for_each argument, and
// a map hidden as a whole would hide every other object's changes too
// (docs/adr/0003-secrets-never-in-clear.md).

// IsSecretBody reports whether body (compact JSON, as Split and the chart
// renderer write it) is a core v1 Secret. A body that cannot be read is
// treated as one: what cannot be told apart is not shown.
func IsSecretBody(body string) bool {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(body), &head); err != nil {
		return true
	}
	return sensitive.IsSecret(head.APIVersion, head.Kind)
}

// SecretsApart moves every Secret out of bodies into the map it returns,
// under the same key.
func SecretsApart(bodies ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range bodies {
		for key, body := range m {
			if IsSecretBody(body) {
				out[key] = body
				delete(m, key)
			}
		}
	}
	return out
}

// SecretAttributes adds sensitive (the bodies kept apart, hidden as a whole)
// and sensitive_keys (their keys, in the clear, to make one resource per key
// of) to a data source's schema. what says which bodies sensitive holds.
func SecretAttributes(attrs map[string]schema.Attribute, what string) map[string]schema.Attribute {
	attrs["sensitive"] = schema.MapAttribute{ElementType: types.StringType, Computed: true, Sensitive: true,
		Description: what + ", keyed and written like the other maps and left out of them, so their contents " +
			"never print in a plan. Apply them by the keys of sensitive_keys, each with yaml_body_wo, which keeps " +
			"the body out of the resource's state and plans too."}
	attrs["sensitive_keys"] = schema.ListAttribute{ElementType: types.StringType, Computed: true,
		Description: "The keys of sensitive, sorted, in the clear: a resource per key can be made from them " +
			"while sensitive itself stays hidden."}
	return attrs
}

// SecretValues are the values of sensitive and sensitive_keys for bodies
// kept apart. Without any they are empty, never null: the documented
// `for_each = toset(data.<source>.sensitive_keys)` must work on a bundle
// without a Secret too, and Terraform refuses a null for_each.
func SecretValues(ctx context.Context, secrets map[string]string, diags *diag.Diagnostics) (types.Map, types.List) {
	if secrets == nil {
		secrets = map[string]string{}
	}
	bodies, d := types.MapValueFrom(ctx, types.StringType, secrets)
	diags.Append(d...)
	keys, d := types.ListValueFrom(ctx, types.StringType, append([]string{}, slices.Sorted(maps.Keys(secrets))...))
	diags.Append(d...)
	return bodies, keys
}
