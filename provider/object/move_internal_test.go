package object

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A moved block from a resource we cannot take over is refused with the
// list of those we can, and what to do instead.
func TestMoveState_refusesOtherSources(t *testing.T) {
	r := &Resource{}
	var sch resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &sch)
	for _, tc := range []struct{ name, typ, addr, json string }{
		{"another kind of resource", "kubernetes_config_map_v1", "registry.terraform.io/hashicorp/kubernetes", `{"id":"default/x"}`},
		{"our own resource", "k8sconnect_object", "registry.terraform.io/k8sconnect/k8sconnect", `{"yaml_body":"x"}`},
		{"a manifest that is not an object", "kubernetes_manifest", "registry.terraform.io/hashicorp/kubernetes", `{"manifest":{"value":"oops","type":"string"}}`},
		{"no yaml_body", "kubectl_manifest", "registry.terraform.io/alekc/kubectl", `{"id":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := resource.MoveStateResponse{TargetState: tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(context.Background()), nil)}}
			r.moveState(context.Background(), resource.MoveStateRequest{
				SourceTypeName: tc.typ, SourceProviderAddress: tc.addr, SourceRawState: &tfprotov6.RawState{JSON: []byte(tc.json)},
			}, &resp)
			if !resp.Diagnostics.HasError() {
				t.Fatalf("moving %s from %s was accepted", tc.typ, tc.addr)
			}
			msg := resp.Diagnostics.Errors()[0].Detail()
			if tc.name == "another kind of resource" || tc.name == "our own resource" {
				if !strings.Contains(msg, "kubernetes_manifest") || !strings.Contains(msg, "import") {
					t.Errorf("the refusal does not list what can be moved and how to import instead: %s", msg)
				}
			}
		})
	}
}
