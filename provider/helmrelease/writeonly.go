package helmrelease

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/k8sconnect/k8sconnect/provider/internal/chartinputs"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// set_wo: values the engine hands the provider in the configuration alone,
// never in a plan or state (Terraform and OpenTofu 1.11 and later). They are
// read from the configuration at every plan and apply, rendered as
// set_sensitive values are (applied last, hidden wherever set_sensitive's
// are), and kept nowhere but in the cluster: the objects they reach and the
// release record, as helm keeps every value.

// withWriteOnly reads set_wo from config into m, for rendering; writing m
// back to a plan or state nulls it again (the framework nulls every
// write-only attribute, and dropWriteOnly does it first).
func withWriteOnly(ctx context.Context, m *model, config tfsdk.Config, diags *diag.Diagnostics) {
	diags.Append(config.GetAttribute(ctx, pathSetWO, &m.SetWO)...)
}

// dropWriteOnly forgets set_wo before m is written to a plan or state.
func (m *model) dropWriteOnly() { m.SetWO = nil }

// writeOnlyKnown reports whether every set_wo entry is known.
func (m *model) writeOnlyKnown() bool {
	for _, s := range m.SetWO {
		if s.Name.IsUnknown() || s.Value.IsUnknown() || s.Type.IsUnknown() {
			return false
		}
	}
	return true
}

// writeOnlyValues are set_wo as Helm settings.
func (m *model) writeOnlyValues() []helmchart.Setting {
	out := make([]helmchart.Setting, 0, len(m.SetWO))
	for _, s := range m.SetWO {
		out = append(out, helmchart.Setting{Name: s.Name.ValueString(), Value: s.Value.ValueString(), Type: s.Type.ValueString()})
	}
	return out
}

// writeOnlyDigest tells one set_wo from another without holding it: an
// HMAC-SHA256, keyed by the release id, of its entries, as objects hides a
// sensitive field; "" when there is none. The last apply's is kept in
// private state (renderedAs), so a plan whose set_wo changed renders an
// upgrade, not a repair of the last revision.
func (m *model) writeOnlyDigest() string {
	if len(m.SetWO) == 0 {
		return ""
	}
	b, err := json.Marshal(m.writeOnlyValues())
	if err != nil {
		return "" // strings only: cannot happen
	}
	mac := hmac.New(sha256.New, []byte("k8sconnect set_wo "+m.ID.ValueString()))
	mac.Write(b)
	return hex.EncodeToString(mac.Sum(nil))
}

// lastRenderOf is how the last apply rendered, when it rendered with the
// set_wo m has; nil otherwise, which makes the apply an upgrade.
func lastRenderOf(as *renderedAs, m *model) *renderedAs {
	if as == nil || as.WriteOnly != m.writeOnlyDigest() {
		return nil
	}
	return as
}

// chartValues are the values the chart is rendered with: the shared
// arguments' (chartinputs), then set_wo.
func (m *model) chartValues(ctx context.Context, diags *diag.Diagnostics) helmchart.Values {
	v := m.ChartValues(ctx, diags)
	v.WriteOnly = m.writeOnlyValues()
	return v
}

// setWOAttribute is set_wo's schema: set's, every part write-only.
func setWOAttribute() schema.Attribute {
	return schema.ListNestedAttribute{Optional: true, WriteOnly: true,
		Description: "Single values that are never stored, applied last (after set_sensitive), as the argument of " +
			"hashicorp/helm of this name: write-only, so they are in no plan and no state. Needs Terraform 1.11 " +
			"or OpenTofu 1.11 or later. Every field a value reaches shows in `objects` as a keyed hash, as with " +
			"set_sensitive, and errors and notes are scrubbed of them. A plan sees a change to them by the " +
			"objects they reach and by a keyed digest of the last apply's values kept in private state; change " +
			"set_wo_revision to upgrade the release with them in any case. The release record keeps them " +
			"among its values, as helm keeps every value.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name":  schema.StringAttribute{Required: true, WriteOnly: true, Description: chartinputs.SettingName},
			"value": schema.StringAttribute{Required: true, WriteOnly: true, Description: "The value."},
			"type": schema.StringAttribute{Optional: true, WriteOnly: true, Description: chartinputs.SettingType,
				Validators: chartinputs.SettingTypes},
		}}}
}

// setWORevisionAttribute is set_wo_revision's schema.
func setWORevisionAttribute() schema.Attribute {
	return schema.Int64Attribute{Optional: true,
		Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("set_wo"))},
		Description: "Any number, kept in state: a change plans an upgrade of the release, rendered with the " +
			"write-only values as the configuration has them now."}
}
