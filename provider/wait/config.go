package wait

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// idOf is the wait's id, known as soon as the object's identity is.
func idOf(ctx context.Context, refObj types.Object) (string, bool) {
	if refObj.IsNull() || refObj.IsUnknown() {
		return "", false
	}
	ref, d := resourceref.FromObject(ctx, refObj)
	if d.HasError() {
		return "", false
	}
	parts := []string{}
	for _, s := range []types.String{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name} {
		if s.IsUnknown() {
			return "", false
		}
		if v := s.ValueString(); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, "/"), true
}

// specOf reads a known wait_for; validateWaitFor has vetted it.
func specOf(ctx context.Context, obj types.Object) (waiting.Spec, time.Duration, diag.Diagnostics) {
	var spec waiting.Spec
	w, diags := waitForOf(ctx, obj)
	if diags.HasError() {
		return spec, 0, diags
	}
	timeout := DefaultTimeout
	if !w.Timeout.IsNull() {
		d, err := parseTimeout(w.Timeout.ValueString())
		if err != nil {
			diags.AddAttributeError(pathWaitFor.AtName("timeout"), "Invalid timeout", err.Error())
			return spec, 0, diags
		}
		timeout = d
	}
	switch {
	case !w.Field.IsNull():
		p, err := objectpath.ParseOne(w.Field.ValueString())
		if err != nil {
			diags.AddAttributeError(pathWaitFor.AtName("field"), "Invalid field", err.Error())
		}
		spec.Field = p
	case !w.FieldValue.IsNull():
		m := map[string]string{}
		diags.Append(w.FieldValue.ElementsAs(ctx, &m, false)...)
		fvs, err := waiting.NewFieldValues(m)
		if err != nil {
			diags.AddAttributeError(pathWaitFor.AtName("field_value"), "Invalid field_value", err.Error())
		}
		spec.FieldValues = fvs
	case !w.Condition.IsNull():
		spec.Condition = w.Condition.ValueString()
	case w.Rollout.ValueBool():
		spec.Rollout = true
	case w.Ready.ValueBool():
		spec.Ready = true
	default:
		diags.AddAttributeError(pathWaitFor, "Nothing to wait for", modesHint)
	}
	return spec, timeout, diags
}

func waitForOf(ctx context.Context, obj types.Object) (waitForModel, diag.Diagnostics) {
	var w waitForModel
	if obj.IsNull() || obj.IsUnknown() {
		return w, nil
	}
	diags := obj.As(ctx, &w, basetypes.ObjectAsOptions{})
	return w, diags
}

func isFieldWait(ctx context.Context, obj types.Object) bool {
	if obj.IsUnknown() {
		return true // may be: status must stay unknown
	}
	w, diags := waitForOf(ctx, obj)
	return !diags.HasError() && !w.Field.IsNull()
}

// validateWaitFor checks what can be checked while parts may be unknown.
func validateWaitFor(ctx context.Context, obj types.Object) diag.Diagnostics {
	w, diags := waitForOf(ctx, obj)
	if diags.HasError() || obj.IsNull() || obj.IsUnknown() {
		return diags
	}
	set, unknown := 0, false
	for _, m := range []struct {
		v     attr.Value
		isSet bool
	}{
		{w.Field, !w.Field.IsNull()},
		{w.FieldValue, !w.FieldValue.IsNull()},
		{w.Condition, !w.Condition.IsNull()},
		{w.Rollout, w.Rollout.ValueBool()},
		{w.Ready, w.Ready.ValueBool()},
	} {
		switch {
		case m.v.IsUnknown():
			unknown = true
		case m.isSet:
			set++
		}
	}
	switch {
	case set > 1:
		diags.AddAttributeError(pathWaitFor, "More than one thing to wait for", modesHint+
			" To wait for several things, use one k8sconnect_wait for each.")
	case set == 0 && !unknown:
		diags.AddAttributeError(pathWaitFor, "Nothing to wait for", modesHint)
	}
	if !w.Field.IsNull() && !w.Field.IsUnknown() {
		if _, err := objectpath.ParseOne(w.Field.ValueString()); err != nil {
			diags.AddAttributeError(pathWaitFor.AtName("field"), "Invalid field", err.Error())
		}
	}
	if !w.FieldValue.IsNull() && !w.FieldValue.IsUnknown() {
		elems := w.FieldValue.Elements()
		if len(elems) == 0 {
			diags.AddAttributeError(pathWaitFor.AtName("field_value"), "Invalid field_value", "field_value needs at least one field: the path of a field, such as status.phase, and the value to wait for, such as Bound.")
		}
		for k := range elems {
			if _, err := objectpath.ParseOne(k); err != nil {
				diags.AddAttributeError(pathWaitFor.AtName("field_value").AtMapKey(k), "Invalid field_value", err.Error())
			}
		}
	}
	if !w.Condition.IsNull() && !w.Condition.IsUnknown() && strings.TrimSpace(w.Condition.ValueString()) == "" {
		diags.AddAttributeError(pathWaitFor.AtName("condition"), "Invalid condition", "condition is a condition type such as Ready or Complete; it cannot be empty.")
	}
	if !w.Timeout.IsNull() && !w.Timeout.IsUnknown() {
		if _, err := parseTimeout(w.Timeout.ValueString()); err != nil {
			diags.AddAttributeError(pathWaitFor.AtName("timeout"), "Invalid timeout", err.Error())
		}
	}
	return diags
}

func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write it like \"90s\", \"15m\" or \"1h30m\"", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout must be positive, got %q; leave it out for the default of %s", s, DefaultTimeout)
	}
	return d, nil
}

const modesHint = "Set exactly one of wait_for.field, wait_for.field_value, wait_for.condition, wait_for.rollout = true " +
	"or wait_for.ready = true."

// refuseRolloutWithoutOne rejects rollout waits on kinds that have no rollout,
// as soon as the kind is known.
func refuseRolloutWithoutOne(ctx context.Context, m model) diag.Diagnostics {
	var diags diag.Diagnostics
	w, d := waitForOf(ctx, m.WaitFor)
	if d.HasError() || !w.Rollout.ValueBool() || m.ResourceRef.IsNull() || m.ResourceRef.IsUnknown() {
		return diags
	}
	ref, d := resourceref.FromObject(ctx, m.ResourceRef)
	if d.HasError() || ref.Kind.IsUnknown() || ref.APIVersion.IsUnknown() {
		return diags
	}
	gvk := k8sschema.FromAPIVersionAndKind(ref.APIVersion.ValueString(), ref.Kind.ValueString())
	if !waiting.HasRollout(gvk) {
		diags.AddAttributeError(pathWaitFor.AtName("rollout"), "No rollout to wait for",
			fmt.Sprintf("%s (%s) has no rollout; only %s do. Wait for a condition or a field instead.",
				gvk.Kind, ref.APIVersion.ValueString(), waiting.RolloutKinds()))
	}
	return diags
}
