// Package otherproviders stands in for the providers whose state users move to
// k8sconnect_object with a `moved` block: hashicorp/kubernetes
// (kubernetes_manifest), the kubectl-style providers (kubectl_manifest) and the
// upstream k8sconnect provider (its k8sconnect_object). Terraform and OpenTofu
// refuse to plan a state that names a provider they cannot start, even though
// only the target provider takes part in the move; the tests start these
// stand-ins instead of downloading the real ones (there is no registry here).
//
// A stand-in declares its resource's schema as the provider documents it (the
// attributes a state file of that resource holds) and nothing else: it reads
// state back unchanged and refuses to create, change or delete anything, so a
// test in which the engine asks the old provider to do work fails loudly.
package otherproviders

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// Source is one provider a stand-in plays.
type Source struct {
	Address  string // registry address, e.g. registry.terraform.io/hashicorp/kubernetes
	Type     string // provider type: the binary is terraform-provider-<Type>
	Resource string // the resource type whose state is moved
	Version  int64  // schema version of that resource's state
	schema   schema.Schema
}

// Kubernetes is hashicorp/kubernetes and its kubernetes_manifest.
var Kubernetes = Source{
	Address: "registry.terraform.io/hashicorp/kubernetes", Type: "kubernetes", Resource: "kubernetes_manifest", Version: 1,
	schema: schema.Schema{
		Attributes: map[string]schema.Attribute{
			"manifest":        schema.DynamicAttribute{Required: true},
			"object":          schema.DynamicAttribute{Optional: true, Computed: true},
			"computed_fields": schema.ListAttribute{ElementType: types.StringType, Optional: true},
			"wait_for": schema.ObjectAttribute{Optional: true, AttributeTypes: map[string]attr.Type{
				"fields": types.MapType{ElemType: types.StringType},
			}},
		},
		Blocks: map[string]schema.Block{
			"field_manager": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"name":            schema.StringAttribute{Optional: true},
				"force_conflicts": schema.BoolAttribute{Optional: true},
			}}},
			"wait": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
				Attributes: map[string]schema.Attribute{
					"fields":  schema.MapAttribute{ElementType: types.StringType, Optional: true},
					"rollout": schema.BoolAttribute{Optional: true},
				},
				Blocks: map[string]schema.Block{"condition": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"type":   schema.StringAttribute{Optional: true},
						"status": schema.StringAttribute{Optional: true},
					},
				}}},
			}},
			"timeouts": schema.ListNestedBlock{NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
				"create": schema.StringAttribute{Optional: true},
				"update": schema.StringAttribute{Optional: true},
				"delete": schema.StringAttribute{Optional: true},
			}}},
		},
	},
}

// Kubectl is a kubectl-style provider and its kubectl_manifest.
var Kubectl = Source{
	Address: "registry.terraform.io/gavinbunney/kubectl", Type: "kubectl", Resource: "kubectl_manifest", Version: 1,
	schema: schema.Schema{Attributes: map[string]schema.Attribute{
		"id":                      schema.StringAttribute{Computed: true},
		"yaml_body":               schema.StringAttribute{Required: true, Sensitive: true},
		"yaml_body_parsed":        schema.StringAttribute{Computed: true},
		"yaml_incluster":          schema.StringAttribute{Computed: true, Sensitive: true},
		"live_manifest_incluster": schema.StringAttribute{Computed: true, Sensitive: true},
		"api_version":             schema.StringAttribute{Computed: true},
		"kind":                    schema.StringAttribute{Computed: true},
		"name":                    schema.StringAttribute{Computed: true},
		"namespace":               schema.StringAttribute{Computed: true},
		"override_namespace":      schema.StringAttribute{Optional: true},
		"uid":                     schema.StringAttribute{Computed: true},
		"live_uid":                schema.StringAttribute{Computed: true},
		"sensitive_fields":        schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"ignore_fields":           schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"force_new":               schema.BoolAttribute{Optional: true},
		"server_side_apply":       schema.BoolAttribute{Optional: true},
		"field_manager":           schema.StringAttribute{Optional: true},
		"force_conflicts":         schema.BoolAttribute{Optional: true},
		"apply_only":              schema.BoolAttribute{Optional: true},
		"validate_schema":         schema.BoolAttribute{Optional: true},
		"wait":                    schema.BoolAttribute{Optional: true},
		"wait_for_rollout":        schema.BoolAttribute{Optional: true},
	}},
}

// Upstream is the upstream k8sconnect provider and its k8sconnect_object.
var Upstream = Source{
	Address: "registry.terraform.io/jmorris0x0/k8sconnect", Type: "k8sconnect", Resource: "k8sconnect_object", Version: 1,
	schema: schema.Schema{Attributes: map[string]schema.Attribute{
		"id":                       schema.StringAttribute{Computed: true},
		"yaml_body":                schema.StringAttribute{Required: true},
		"cluster":                  schema.ObjectAttribute{Optional: true, AttributeTypes: upstreamCluster},
		"delete_protection":        schema.BoolAttribute{Optional: true},
		"delete_timeout":           schema.StringAttribute{Optional: true},
		"force_destroy":            schema.BoolAttribute{Optional: true},
		"ignore_fields":            schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"managed_state_projection": schema.MapAttribute{ElementType: types.StringType, Computed: true},
		"object_ref": schema.ObjectAttribute{Computed: true, AttributeTypes: map[string]attr.Type{
			"api_version": types.StringType, "kind": types.StringType, "name": types.StringType, "namespace": types.StringType,
		}},
	}},
}

var upstreamCluster = map[string]attr.Type{
	"host": types.StringType, "cluster_ca_certificate": types.StringType, "kubeconfig": types.StringType,
	"context": types.StringType, "token": types.StringType, "client_certificate": types.StringType,
	"client_key": types.StringType, "insecure": types.BoolType, "proxy_url": types.StringType,
	"exec": types.ObjectType{AttrTypes: map[string]attr.Type{
		"api_version": types.StringType, "command": types.StringType,
		"args": types.ListType{ElemType: types.StringType}, "env": types.MapType{ElemType: types.StringType},
	}},
}

// All lists every stand-in.
var All = []Source{Kubernetes, Kubectl, Upstream}

// ByType is the stand-in whose provider type is typ.
func ByType(typ string) (Source, bool) {
	for _, s := range All {
		if s.Type == typ {
			return s, true
		}
	}
	return Source{}, false
}

// Provider is the stand-in provider of s.
func (s Source) Provider() fwprovider.Provider { return standIn{s} }

type standIn struct{ src Source }

func (p standIn) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = p.src.Type
}

// Schema accepts any provider block: the tests' configurations have none.
func (p standIn) Schema(context.Context, fwprovider.SchemaRequest, *fwprovider.SchemaResponse) {}

func (p standIn) Configure(context.Context, fwprovider.ConfigureRequest, *fwprovider.ConfigureResponse) {
}

func (p standIn) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return standInResource(p) }}
}

func (p standIn) DataSources(context.Context) []func() datasource.DataSource { return nil }

type standInResource struct{ src Source }

func (r standInResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.src.Resource
}

func (r standInResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.src.schema
	resp.Schema.Version = r.src.Version
}

// Read keeps the state as it is: the stand-in has no cluster to look at.
func (r standInResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r standInResource) Create(_ context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.AddError("Stand-in provider", r.src.Address+" is a test stand-in: it creates nothing.")
}

func (r standInResource) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("Stand-in provider", r.src.Address+" is a test stand-in: it changes nothing.")
}

func (r standInResource) Delete(_ context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	resp.Diagnostics.AddError("Stand-in provider", r.src.Address+" is a test stand-in: it deletes nothing.")
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// Build builds the stand-in binary once per test process and returns a
// directory holding it as terraform-provider-<src.Type>, for dev_overrides.
func Build(src Source) (string, error) {
	buildOnce.Do(func() {
		root, err := toolchain.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		if buildDir, err = os.MkdirTemp("", "k8sconnect-standins-"); err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "terraform-provider-other"), "./internal/testing/otherproviders/cmd/terraform-provider-other")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the stand-in providers: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		return "", buildErr
	}
	dir := filepath.Join(buildDir, src.Type)
	bin := filepath.Join(dir, "terraform-provider-"+src.Type)
	if _, err := os.Stat(bin); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.Link(filepath.Join(buildDir, "terraform-provider-other"), bin)
}

// Remove deletes what Build built (call it from TestMain after the tests).
func Remove() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}
