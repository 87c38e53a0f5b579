package object

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

var pathSensitiveFields = path.Root("sensitive_fields")

var sensitiveFieldsAttribute = schema.ListAttribute{
	Description: "Fields whose values are secret, for kinds other than Secret that carry credentials (a CRD's " +
		"`spec.password`, say), in the same path language as ignore_fields; a path covers everything under it. " +
		"A core v1 Secret's `data` and `stringData` are always sensitive. Sensitive values never appear in " +
		"managed_state_projection, private state, warnings, errors or logs: the projection holds " +
		"`(sensitive, hmac-sha256:<16 hex>)`, a hash keyed by this resource's id, so a change to the value " +
		"(drift) still shows, and is reverted, without showing the value.",
	ElementType: types.StringType,
	Optional:    true,
}

// redactor is the resource's sensitive.Redactor: keyed by its id (unknown while
// a create is planned) and covering its sensitive_fields. While
// sensitive_fields is unknown or invalid every value is hidden.
func redactor(ctx context.Context, m model, diags *diag.Diagnostics) sensitive.Redactor {
	if m.SensitiveFields.IsUnknown() {
		return sensitive.Unknown()
	}
	var paths []objectpath.Path
	if !m.SensitiveFields.IsNull() {
		var raw []types.String
		diags.Append(m.SensitiveFields.ElementsAs(ctx, &raw, false)...)
		for i, s := range raw {
			if s.IsUnknown() {
				return sensitive.Unknown()
			}
			p, err := objectpath.Parse(s.ValueString())
			if err != nil {
				diags.AddAttributeError(pathSensitiveFields.AtListIndex(i), "Invalid sensitive_fields entry", err.Error())
				return sensitive.Unknown()
			}
			paths = append(paths, p)
		}
	}
	key := ""
	if !m.ID.IsUnknown() && !m.ID.IsNull() {
		key = m.ID.ValueString()
	}
	return sensitive.New(key, paths)
}

// projectionValue is the managed_state_projection value of p: a sensitive leaf
// whose hash cannot be computed yet is unknown ("known after apply").
func projectionValue(p projection.Projection) map[string]attr.Value {
	out := make(map[string]attr.Value, len(p))
	for k, v := range p {
		if v == sensitive.Pending {
			out[k] = types.StringUnknown()
		} else {
			out[k] = types.StringValue(v)
		}
	}
	return out
}

// pendingNames reports whether a map names a path by a pending hash (see
// sensitive.Redactor.Name).
func pendingNames[V any](m map[string]V) bool {
	for k := range m {
		if strings.Contains(k, sensitive.Pending) {
			return true
		}
	}
	return false
}

// fullyKnown reports whether a projection map has no unknown element.
func fullyKnown(m types.Map) bool {
	if m.IsUnknown() || m.IsNull() {
		return !m.IsUnknown()
	}
	for _, e := range m.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

// SecretPlaceholder stands for every value of an imported Secret in the
// yaml_body that import records (and -generate-config-out writes). It is not
// base64, and a plan that still holds it is refused, so it can never be
// applied by mistake.
const SecretPlaceholder = "<k8sconnect: replace with the value; import does not export Secret values>"

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

// privateRefreshSkipped marks a state whose last Read was skipped because the
// stored credentials were refused (connection.StaleCredentials).
const privateRefreshSkipped = "refresh_skipped"

func markRefreshSkipped(ctx context.Context, w privatestate.Writer, skipped bool) {
	var v []byte
	if skipped {
		v = []byte("true")
	}
	_ = w.SetKey(ctx, privateRefreshSkipped, v)
}

func refreshSkipped(ctx context.Context, r privatestate.Reader) bool {
	v, _ := r.GetKey(ctx, privateRefreshSkipped)
	return string(v) == "true"
}
