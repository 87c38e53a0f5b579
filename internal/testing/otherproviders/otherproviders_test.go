package otherproviders

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Every stand-in's schema is one the framework serves, under its resource
// type and the schema version its state records.
func TestStandInSchemas(t *testing.T) {
	ctx := context.Background()
	for _, src := range All {
		t.Run(src.Type, func(t *testing.T) {
			r := standInResource{src}
			var meta resource.MetadataResponse
			r.Metadata(ctx, resource.MetadataRequest{}, &meta)
			if meta.TypeName != src.Resource {
				t.Errorf("resource type %q, want %q", meta.TypeName, src.Resource)
			}
			var resp resource.SchemaResponse
			r.Schema(ctx, resource.SchemaRequest{}, &resp)
			if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
				t.Fatalf("invalid schema: %v", diags)
			}
			if resp.Schema.Version != src.Version {
				t.Errorf("schema version %d, want %d", resp.Schema.Version, src.Version)
			}
			if got, ok := ByType(src.Type); !ok || got.Address != src.Address {
				t.Errorf("ByType(%q) = %v, %v", src.Type, got.Address, ok)
			}
		})
	}
}

// The helm_release stand-in holds what a moved state of hashicorp/helm 3.x
// needs: the release's name and namespace, at schema version 2.
func TestHelmReleaseStandIn(t *testing.T) {
	if Helm.Version != 2 || Helm.Resource != "helm_release" {
		t.Fatalf("Helm stand-in is %s at version %d", Helm.Resource, Helm.Version)
	}
	for _, attr := range []string{"name", "namespace", "chart", "repository", "version", "values", "set", "metadata", "status"} {
		if _, ok := Helm.schema.Attributes[attr]; !ok {
			t.Errorf("helm_release stand-in has no %s", attr)
		}
	}
}
