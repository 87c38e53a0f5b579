package acctest

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/k8sconnect/k8sconnect/provider"
)

// ValidationErrors sends the provider the ValidateResourceConfig request an
// engine sends for resource (e.g. "k8sconnect_patch"): every attribute null
// but the strings in set, with caps as the engine's client capabilities (nil:
// an engine that announces none, such as one before write-only attributes).
// It returns the error diagnostics, one "summary: detail" a line.
func ValidationErrors(t testing.TB, resource string, set map[string]string, caps *tfprotov6.ValidateResourceConfigClientCapabilities) string {
	t.Helper()
	ctx := context.Background()
	server, err := Factories()[provider.TypeName]()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ, ok := schemas.ResourceSchemas[resource].ValueType().(tftypes.Object)
	if !ok {
		t.Fatalf("no resource %s", resource)
	}
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		values[name] = tftypes.NewValue(tftypes.String, v)
	}
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, values))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{
		TypeName: resource, Config: &config, ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			errs = append(errs, d.Summary+": "+d.Detail)
		}
	}
	return strings.Join(errs, "\n")
}
