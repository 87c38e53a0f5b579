package object

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg model
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	refuseOldEngines(cfg, req.ClientCapabilities, &resp.Diagnostics)
	_, _ = desiredFromConfig(ctx, cfg, &resp.Diagnostics)
	_ = redactor(ctx, cfg, &resp.Diagnostics)
	refusePlaceholders(cfg, &resp.Diagnostics)
}

// refuseOldEngines names the versions that take yaml_body_wo when the engine
// does not say it can: an engine that cannot would store a write-only value
// in state or fail on the null the provider returns for it. The framework
// refuses it too, naming Terraform alone.
func refuseOldEngines(m model, caps resource.ValidateConfigClientCapabilities, diags *diag.Diagnostics) {
	if caps.WriteOnlyAttributesAllowed || m.YAMLBodyWO.IsNull() {
		return
	}
	diags.AddAttributeError(pathYAMLBodyWO, "yaml_body_wo needs Terraform 1.11 or OpenTofu 1.11",
		"yaml_body_wo is a write-only attribute, which this engine does not support: it needs Terraform 1.11 or "+
			"later, or OpenTofu 1.11 or later. Upgrade the engine, or give the object by yaml_body (wrapped in "+
			"sensitive() for a Secret), which is kept in state.")
}

// refusePlaceholders fails validation while an imported Secret's body still
// holds SecretPlaceholder.
func refusePlaceholders(m model, diags *diag.Diagnostics) {
	body, at := m.body()
	if body.IsUnknown() || body.IsNull() || !strings.Contains(body.ValueString(), SecretPlaceholder) {
		return
	}
	diags.AddAttributeError(at, "Secret value placeholder left in "+at.String(),
		at.String()+" still holds the placeholder that import writes in place of a Secret's values ("+SecretPlaceholder+"). "+
			"Replace each one with the real value, for example yaml_body_wo = templatefile(...) fed from a "+
			"variable or a secret store, then plan again.")
}
