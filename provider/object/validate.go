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
	_, _ = desiredFromConfig(ctx, cfg, &resp.Diagnostics)
	_ = redactor(ctx, cfg, &resp.Diagnostics)
	refusePlaceholders(cfg, &resp.Diagnostics)
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
