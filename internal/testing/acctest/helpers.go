package acctest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Words matches a message however the engine wraps its lines.
func Words(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

// Exists is a terraform-plugin-testing check that the object is in the cluster.
func Exists(t *testing.T, gvr schema.GroupVersionResource, ns, name string) func(*terraform.State) error {
	return func(*terraform.State) error {
		obj, err := Get(t, gvr, ns, name)
		if err != nil || obj == nil {
			return fmt.Errorf("%s %s/%s is not in the cluster (err=%v)", gvr.Resource, ns, name, err)
		}
		return nil
	}
}

// Managers are the field managers in an object's managedFields.
func Managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager)
	}
	return out
}

// PatchManagers are the k8sconnect_patch field managers among them.
func PatchManagers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, m := range Managers(obj) {
		if strings.HasPrefix(m, "k8sconnect-patch-") {
			out = append(out, m)
		}
	}
	return out
}

// ReadDataSource calls a (configured) data source's Read directly, without an
// engine, with the given attributes set and the rest null, and returns the
// response and the state's attributes.
func ReadDataSource(t testing.TB, ds datasource.DataSource, attrs map[string]tftypes.Value) (*datasource.ReadResponse, map[string]tftypes.Value) {
	t.Helper()
	ctx := context.Background()
	var sr datasource.SchemaResponse
	ds.Schema(ctx, datasource.SchemaRequest{}, &sr)
	typ, ok := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatalf("a data source's schema is not an object")
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range attrs {
		vals[name] = v
	}
	raw := tftypes.NewValue(typ, vals)
	resp := &datasource.ReadResponse{State: tfsdk.State{Schema: sr.Schema, Raw: raw.Copy()}}
	ds.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: raw}}, resp)
	var out map[string]tftypes.Value
	if err := resp.State.Raw.As(&out); err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// ClusterCheck is a state check that looks at the cluster. Tests with
// for_each cannot use TestStep.Check: terraform-plugin-testing's legacy state
// shim rejects for_each instances ("for_each is not supported"), while state
// checks read the engine's JSON state.
type ClusterCheck func() error

// CheckState runs the check.
func (c ClusterCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c()
}
