package object

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
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

// refusePlaceholders fails validation while an imported Secret's yaml_body
// still holds SecretPlaceholder.
func refusePlaceholders(m model, diags *diag.Diagnostics) {
	if m.YAMLBody.IsUnknown() || m.YAMLBody.IsNull() || !strings.Contains(m.YAMLBody.ValueString(), SecretPlaceholder) {
		return
	}
	diags.AddAttributeError(pathYAMLBody, "Secret value placeholder left in yaml_body",
		"yaml_body still holds the placeholder that import writes in place of a Secret's values ("+SecretPlaceholder+"). "+
			"Replace each one with the real value, for example yaml_body = sensitive(templatefile(...)) fed from a "+
			"variable or a secret store, then plan again.")
}

// durationValidator accepts Go durations greater than zero ("90s", "15m").
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "a positive duration such as 90s or 15m"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q is not a positive duration; use a form such as \"90s\", \"15m\" or \"1h\".", req.ConfigValue.ValueString()))
	}
}
