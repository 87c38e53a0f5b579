package wait

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
)

var waitForTypes = map[string]attr.Type{
	"field":       types.StringType,
	"field_value": types.MapType{ElemType: types.StringType},
	"condition":   types.StringType,
	"rollout":     types.BoolType,
	"ready":       types.BoolType,
	"timeout":     types.StringType,
}

// waitFor builds a wait_for value; unset attributes are null.
func waitFor(t *testing.T, set map[string]attr.Value) types.Object {
	t.Helper()
	attrs := map[string]attr.Value{
		"field": types.StringNull(), "field_value": types.MapNull(types.StringType),
		"condition": types.StringNull(), "rollout": types.BoolNull(), "ready": types.BoolNull(), "timeout": types.StringNull(),
	}
	for k, v := range set {
		attrs[k] = v
	}
	o, diags := types.ObjectValue(waitForTypes, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return o
}

func TestValidateWaitFor(t *testing.T) {
	phase, _ := types.MapValue(types.StringType, map[string]attr.Value{"status.phase": types.StringValue("Bound")})
	empty, _ := types.MapValue(types.StringType, map[string]attr.Value{})
	badKey, _ := types.MapValue(types.StringType, map[string]attr.Value{"status[": types.StringValue("x")})
	every, _ := types.MapValue(types.StringType, map[string]attr.Value{"status.conditions[*].status": types.StringValue("True")})
	for name, tc := range map[string]struct {
		set  map[string]attr.Value
		want string // "" for valid
	}{
		"field":                 {map[string]attr.Value{"field": types.StringValue("status.loadBalancer.ingress[0].hostname")}, ""},
		"field_value":           {map[string]attr.Value{"field_value": phase, "timeout": types.StringValue("90s")}, ""},
		"condition":             {map[string]attr.Value{"condition": types.StringValue("Ready")}, ""},
		"rollout":               {map[string]attr.Value{"rollout": types.BoolValue(true)}, ""},
		"unknown mode":          {map[string]attr.Value{"condition": types.StringUnknown()}, ""},
		"unknown timeout":       {map[string]attr.Value{"rollout": types.BoolValue(true), "timeout": types.StringUnknown()}, ""},
		"nothing":               {map[string]attr.Value{"timeout": types.StringValue("1m")}, "Nothing to wait for"},
		"rollout false":         {map[string]attr.Value{"rollout": types.BoolValue(false)}, "Nothing to wait for"},
		"two modes":             {map[string]attr.Value{"field": types.StringValue("spec.x"), "condition": types.StringValue("Ready")}, "More than one"},
		"zero timeout":          {map[string]attr.Value{"rollout": types.BoolValue(true), "timeout": types.StringValue("0s")}, "must be positive"},
		"negative timeout":      {map[string]attr.Value{"rollout": types.BoolValue(true), "timeout": types.StringValue("-1m")}, "must be positive"},
		"bad timeout":           {map[string]attr.Value{"rollout": types.BoolValue(true), "timeout": types.StringValue("10 minutes")}, "not a duration"},
		"bad field":             {map[string]attr.Value{"field": types.StringValue("metadata.labels.app.kubernetes.io/name")}, "needs brackets"},
		"empty field_value":     {map[string]attr.Value{"field_value": empty}, "at least one field"},
		"bad field_value path":  {map[string]attr.Value{"field_value": badKey}, "unclosed ["},
		"empty condition":       {map[string]attr.Value{"condition": types.StringValue(" ")}, "cannot be empty"},
		"JSONPath filter field": {map[string]attr.Value{"field": types.StringValue("status.conditions[?(@.type=='Available')].status")}, ""},
		"[*] field":             {map[string]attr.Value{"field": types.StringValue("status.conditions[*].status")}, "must name one value"},
		"[*] field_value":       {map[string]attr.Value{"field_value": every}, "must name one value"},
	} {
		t.Run(name, func(t *testing.T) {
			diags := validateWaitFor(context.Background(), waitFor(t, tc.set))
			var got string
			for _, d := range diags.Errors() {
				got += d.Summary() + ": " + d.Detail() + "\n"
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("unexpected errors: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("errors %q do not mention %q", got, tc.want)
			}
		})
	}
}

func ref(t *testing.T, apiVersion, kind, namespace string) types.Object {
	t.Helper()
	str := func(s string) types.String {
		if s == "?" {
			return types.StringUnknown()
		}
		return types.StringValue(s)
	}
	o, diags := types.ObjectValue(resourceref.AttrTypes, map[string]attr.Value{
		"api_version": str(apiVersion), "kind": str(kind), "namespace": str(namespace), "name": types.StringValue("x"),
		"cluster_connection": types.ObjectNull(connection.AttrTypes),
	})
	if diags.HasError() {
		t.Fatal(diags)
	}
	return o
}

func TestRolloutRefusedForKindsWithoutOne(t *testing.T) {
	rollout := waitFor(t, map[string]attr.Value{"rollout": types.BoolValue(true)})
	for _, tc := range []struct {
		apiVersion, kind string
		refused          bool
	}{
		{"apps/v1", "Deployment", false},
		{"apps/v1", "StatefulSet", false},
		{"apps/v1", "DaemonSet", false},
		{"v1", "ConfigMap", true},
		{"batch/v1", "Job", true},
		{"example.com/v1", "Deployment", true},
		{"v1", "?", false}, // not known yet: judged when it is
	} {
		diags := refuseRolloutWithoutOne(context.Background(), model{ResourceRef: ref(t, tc.apiVersion, tc.kind, "ns"), WaitFor: rollout})
		if diags.HasError() != tc.refused {
			t.Errorf("%s %s: refused = %v, want %v (%v)", tc.apiVersion, tc.kind, diags.HasError(), tc.refused, diags)
		}
	}
	condition := waitFor(t, map[string]attr.Value{"condition": types.StringValue("Ready")})
	if diags := refuseRolloutWithoutOne(context.Background(), model{ResourceRef: ref(t, "v1", "ConfigMap", "ns"), WaitFor: condition}); diags.HasError() {
		t.Errorf("a condition wait on a ConfigMap was refused: %v", diags)
	}
}

func TestIDIsTheIdentity(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ref  types.Object
		want string
		ok   bool
	}{
		{ref(t, "apps/v1", "Deployment", "web"), "apps/v1/Deployment/web/x", true},
		{ref(t, "rbac.authorization.k8s.io/v1", "ClusterRole", ""), "rbac.authorization.k8s.io/v1/ClusterRole/x", true},
		{ref(t, "v1", "ConfigMap", "?"), "", false},
		{types.ObjectUnknown(resourceref.AttrTypes), "", false},
	} {
		got, ok := idOf(ctx, tc.ref)
		if got != tc.want || ok != tc.ok {
			t.Errorf("idOf = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
		}
	}
}

func TestSpecOfDefaultsTheTimeout(t *testing.T) {
	spec, timeout, diags := specOf(context.Background(), waitFor(t, map[string]attr.Value{"condition": types.StringValue("Ready")}))
	if diags.HasError() || timeout != DefaultTimeout || spec.Condition != "Ready" {
		t.Errorf("got %+v, %s, %v", spec, timeout, diags)
	}
}
