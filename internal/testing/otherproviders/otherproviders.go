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

// Helm is hashicorp/helm (3.x, on the plugin framework) and its helm_release,
// at state schema version 2: metadata and postrender are single nested
// attributes there (blocks, at version 1, in 2.x), timeouts an attribute. The
// write-only set_wo is never in a state and is left out.
var Helm = Source{
	Address: "registry.terraform.io/hashicorp/helm", Type: "helm", Resource: "helm_release", Version: 2,
	schema: schema.Schema{Attributes: helmReleaseAttributes()},
}

func helmReleaseAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"id":                  schema.StringAttribute{Computed: true},
		"name":                schema.StringAttribute{Required: true},
		"chart":               schema.StringAttribute{Required: true},
		"manifest":            schema.StringAttribute{Computed: true},
		"status":              schema.StringAttribute{Computed: true},
		"resources":           schema.MapAttribute{ElementType: types.StringType, Computed: true},
		"values":              schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"repository_password": schema.StringAttribute{Optional: true, Sensitive: true},
		"max_history":         schema.Int64Attribute{Optional: true, Computed: true},
		"timeout":             schema.Int64Attribute{Optional: true, Computed: true},
		"set_wo_revision":     schema.Int64Attribute{Optional: true},
		"metadata": schema.SingleNestedAttribute{Computed: true, Attributes: map[string]schema.Attribute{
			"app_version": schema.StringAttribute{Computed: true}, "chart": schema.StringAttribute{Computed: true},
			"first_deployed": schema.Int64Attribute{Computed: true}, "last_deployed": schema.Int64Attribute{Computed: true},
			"name": schema.StringAttribute{Computed: true}, "namespace": schema.StringAttribute{Computed: true},
			"notes": schema.StringAttribute{Computed: true}, "revision": schema.Int64Attribute{Computed: true},
			"values": schema.StringAttribute{Computed: true}, "version": schema.StringAttribute{Computed: true},
		}},
		"postrender": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"args":        schema.ListAttribute{ElementType: types.StringType, Optional: true},
			"binary_path": schema.StringAttribute{Required: true},
		}},
		"timeouts": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"create": schema.StringAttribute{Optional: true}, "read": schema.StringAttribute{Optional: true},
			"update": schema.StringAttribute{Optional: true}, "delete": schema.StringAttribute{Optional: true},
		}},
		"set":           helmSet(schema.StringAttribute{Optional: true}, true),
		"set_sensitive": helmSet(schema.StringAttribute{Required: true, Sensitive: true}, false),
		"set_list": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name":  schema.StringAttribute{Required: true},
			"value": schema.ListAttribute{ElementType: types.StringType, Required: true},
		}}},
	}
	for _, s := range []string{"namespace", "description", "version"} {
		attrs[s] = schema.StringAttribute{Optional: true, Computed: true}
	}
	for _, s := range []string{"keyring", "repository", "repository_ca_file", "repository_cert_file", "repository_key_file", "repository_username"} {
		attrs[s] = schema.StringAttribute{Optional: true}
	}
	attrs["devel"] = schema.BoolAttribute{Optional: true}
	for _, b := range []string{"atomic", "cleanup_on_fail", "create_namespace", "dependency_update", "disable_crd_hooks",
		"disable_openapi_validation", "disable_webhooks", "force_update", "lint", "pass_credentials", "recreate_pods",
		"render_subchart_notes", "replace", "reset_values", "reuse_values", "skip_crds", "take_ownership", "upgrade_install",
		"verify", "wait", "wait_for_jobs"} {
		attrs[b] = schema.BoolAttribute{Optional: true, Computed: true}
	}
	return attrs
}

// helmSet is the element of helm_release's set and set_sensitive lists.
func helmSet(value schema.StringAttribute, typeComputed bool) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"name":  schema.StringAttribute{Required: true},
		"value": value,
		"type":  schema.StringAttribute{Optional: true, Computed: typeComputed},
	}}}
}

// All lists every stand-in.
var All = []Source{Kubernetes, Kubectl, Upstream, Helm}

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
