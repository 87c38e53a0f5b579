package object_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider"
)

// An engine that does not announce write-only attributes (Terraform before
// 1.11, OpenTofu before 1.11) is told, for yaml_body_wo, the versions of both
// that take it; one that announces them is not. The request is the one such
// an engine sends: ValidateResourceConfig without client capabilities.
func TestWriteOnlyBodyOnOlderEngines(t *testing.T) {
	ctx := context.Background()
	server, err := acctest.Factories()[provider.TypeName]()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas[provider.TypeName+"_object"].ValueType().(tftypes.Object)
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	values["yaml_body_wo"] = tftypes.NewValue(tftypes.String, "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\n")
	config, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, values))
	if err != nil {
		t.Fatal(err)
	}
	validate := func(caps *tfprotov6.ValidateResourceConfigClientCapabilities) string {
		t.Helper()
		resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{
			TypeName: provider.TypeName + "_object", Config: &config, ClientCapabilities: caps})
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
	old := validate(nil)
	for _, want := range []string{"Terraform 1.11", "OpenTofu 1.11", "yaml_body"} {
		if !strings.Contains(old, want) {
			t.Errorf("an older engine's error should name %q:\n%s", want, old)
		}
	}
	if current := validate(&tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}); current != "" {
		t.Errorf("an engine that takes write-only attributes is refused:\n%s", current)
	}
}
