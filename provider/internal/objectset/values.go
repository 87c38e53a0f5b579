package objectset

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// ProjectionType is the type of one element of objects: an object's
// projection, field path to value.
var ProjectionType = types.MapType{ElemType: types.StringType}

// ProjectionValue is a projection as an element of objects.
func ProjectionValue(p projection.Projection) attr.Value {
	elems := make(map[string]attr.Value, len(p))
	for k, v := range p {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// MapOf is one element of objects as a map value (null when it is not one).
func MapOf(v attr.Value) types.Map {
	if m, ok := v.(types.Map); ok {
		return m
	}
	return types.MapNull(types.StringType)
}

// Known reports whether an element of objects is known through and through.
func Known(v attr.Value) bool {
	m, ok := v.(types.Map)
	if !ok || m.IsUnknown() || m.IsNull() {
		return false
	}
	for _, e := range m.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

// Applied is what an apply stores of the object key: its element of objects
// and the projection its private state records, from obs, the projection of
// what the server stored. When that differs from planned, the element the
// plan showed (the server stored other than its dry run said: a webhook that
// is not deterministic, a field another manager shares), the engines require
// the planned value, and the next refresh shows the difference as drift, as
// for k8sconnect_object.
func Applied(ctx context.Context, key string, obs projection.Observation, planned attr.Value) (attr.Value, projection.Projection) {
	value := ProjectionValue(obs.Projection)
	if planned != nil && Known(planned) && !planned.Equal(value) {
		tflog.Warn(ctx, "apply result differs from the dry-run prediction", map[string]any{"object": key})
		return planned, ownership.StateProjection(ctx, MapOf(planned))
	}
	return value, obs.Projection
}

// BodyHash is a hash of the body applied for an object, keyed as its
// projection's sensitive values are (a body may hold a Secret's data): a
// plan that sends the same body to an object untouched since needs no dry
// run.
func BodyHash(obj *unstructured.Unstructured, red sensitive.Redactor) string {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return ""
	}
	return red.Hash("body", string(b))
}

// ReportPlanError reports the failed plan of the object key of a set (what
// is "chart" or "set") on its element of objects: "not accepted" when the
// server judged the object, "not checked" when refused credentials, no
// answer, a server error or a failing discovery gave no verdict; with the remedy when the error
// came from a request, and obj's sensitive values scrubbed.
func ReportPlanError(diags *diag.Diagnostics, at path.Path, what, key string, obj *unstructured.Unstructured,
	red sensitive.Redactor, err error) {
	summary, detail := "Object of the "+what+" not accepted", fmt.Sprintf("%s: %v", key, err)
	if remedy := connection.RequestRemedy(err); remedy != "" {
		detail += "\n\n" + remedy
		if connection.Unreachable(err) {
			summary = "Object of the " + what + " not checked"
		}
	}
	if connection.DiscoveryFailing(err) {
		summary = "Object of the " + what + " not checked" // the error says discovery is failing
	}
	diags.AddAttributeError(at, summary, red.Scrub(detail, obj.Object))
}
