// Package object is the k8sconnect_object resource: one Kubernetes object of any
// kind, written as YAML and applied with Server-Side Apply under the field manager
// "k8sconnect".
package object

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// deleteTimeout bounds how long destroy waits for finalizers to finish.
const deleteTimeout = 5 * time.Minute

var (
	_ resource.ResourceWithConfigure      = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
)

// Resource implements k8sconnect_object.
type Resource struct {
	clients *connection.Cache
}

// New returns the resource; the provider passes it a client cache in Configure.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID                types.String `tfsdk:"id"`
	YAMLBody          types.String `tfsdk:"yaml_body"`
	ClusterConnection types.Object `tfsdk:"cluster_connection"`
	ResourceRef       types.Object `tfsdk:"resource_ref"`
}

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object"
}

func (r *Resource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "One Kubernetes object of any kind, applied with Server-Side Apply.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Description:   "Random identifier of this resource, fixed at creation.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"yaml_body": schema.StringAttribute{
				Description: "The object as YAML: exactly one document with apiVersion, kind and metadata.name. " +
					"A change of apiVersion, kind, name or namespace replaces the object.",
				Required: true,
			},
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"resource_ref": resourceref.Attribute(connection.Computed,
				"The object's identity and connection, for k8sconnect_wait.resource_ref."),
		},
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return
	}
	clients, ok := req.ProviderData.(*connection.Cache)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", fmt.Sprintf("expected *connection.Cache, got %T", req.ProviderData))
		return
	}
	r.clients = clients
}

func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var body types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("yaml_body"), &body)...)
	if body.IsUnknown() || body.IsNull() {
		return
	}
	if _, err := manifest.Parse(body.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("yaml_body"), "Invalid yaml_body", err.Error())
	}
}

// ModifyPlan fills resource_ref at plan time, so a k8sconnect_wait that uses it is
// planned with known values, and replaces the object when its identity changes.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.YAMLBody.IsUnknown() {
		return
	}
	obj, err := manifest.Parse(plan.YAMLBody.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("yaml_body"), "Invalid yaml_body", err.Error())
		return
	}
	id := manifest.IdentityOf(obj)
	namespace := r.plannedNamespace(ctx, obj, plan.ClusterConnection)

	if !req.State.Raw.IsNull() {
		var state model
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		prev, diags := resourceref.FromObject(ctx, state.ResourceRef)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		if identityChanged(prev, id, namespace) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("yaml_body"))
		}
	}

	ref, diags := resourceref.Value(ctx, id, namespace, plan.ClusterConnection)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("resource_ref"), ref)...)
}

// plannedNamespace is the namespace the object will live in: the manifest's, or
// "default" for a namespaced kind, or unknown while the kind or the cluster
// cannot be looked up yet (a CRD or cluster created in the same apply).
func (r *Resource) plannedNamespace(ctx context.Context, obj *unstructured.Unstructured, conn types.Object) types.String {
	if ns := obj.GetNamespace(); ns != "" {
		return types.StringValue(ns)
	}
	m, known, diags := connection.FromObject(ctx, conn)
	if !known || diags.HasError() || r.clients == nil {
		return types.StringUnknown()
	}
	c, err := r.clients.Client(ctx, m)
	if err != nil {
		return types.StringUnknown()
	}
	mapping, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return types.StringUnknown()
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return types.StringValue(metav1.NamespaceDefault)
	}
	return types.StringValue("")
}

func identityChanged(prev resourceref.Model, next manifest.Identity, namespace types.String) bool {
	if prev.APIVersion.ValueString() != next.APIVersion || prev.Kind.ValueString() != next.Kind || prev.Name.ValueString() != next.Name {
		return true
	}
	return !namespace.IsUnknown() && prev.Namespace.ValueString() != namespace.ValueString()
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id, err := newID()
	if err != nil {
		resp.Diagnostics.AddError("Could not generate an id", err.Error())
		return
	}
	plan.ID = types.StringValue(id)
	if r.apply(ctx, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if r.apply(ctx, &plan, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// apply server-side applies plan's yaml_body and records where the object landed.
func (r *Resource) apply(ctx context.Context, plan *model, diags *diag.Diagnostics) bool {
	obj, err := manifest.Parse(plan.YAMLBody.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("yaml_body"), "Invalid yaml_body", err.Error())
		return false
	}
	c, ok := r.client(ctx, plan.ClusterConnection, diags)
	if !ok {
		return false
	}
	if _, err := ssa.Apply(ctx, c, obj, ssa.Options{FieldManager: ssa.FieldManager}); err != nil {
		diags.AddError("Apply failed", fmt.Sprintf("Server-side apply of %s failed: %v", manifest.IdentityOf(obj), err))
		return false
	}
	ref, d := resourceref.Value(ctx, manifest.IdentityOf(obj), types.StringValue(obj.GetNamespace()), plan.ClusterConnection)
	diags.Append(d...)
	plan.ResourceRef = ref
	return !diags.HasError()
}

func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	c, ok := r.client(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	_, err := get(ctx, c, ref)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Read failed", fmt.Sprintf("Reading %s: %v", ref.Identity(), err))
	}
}

func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	c, ok := r.client(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	ri, err := resourceClient(c, ref)
	if meta.IsNoMatchError(err) {
		return // the kind itself is gone (its CRD was deleted), so is the object
	}
	if err != nil {
		resp.Diagnostics.AddError("Delete failed", fmt.Sprintf("Deleting %s: %v", ref.Identity(), err))
		return
	}
	name := ref.Name.ValueString()
	propagation := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &propagation})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Delete failed", fmt.Sprintf("Deleting %s: %v", ref.Identity(), err))
		return
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, deleteTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		resp.Diagnostics.AddError("Delete did not finish",
			fmt.Sprintf("%s was asked to delete but still exists after %s: %v", ref.Identity(), deleteTimeout, err))
	}
}

func newID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
