// Package object is the k8sconnect_object resource: one Kubernetes object of any
// kind, written as YAML and applied with Server-Side Apply under the field manager
// "k8sconnect".
//
// Plans tell the truth: every plan runs a server-side dry-run apply and records
// only the fields k8sconnect owns, with the values the server would store
// (managed_state_projection). Drift is judged on that projection alone.
package object

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
)

var (
	_ resource.ResourceWithConfigure      = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
)

// Resource implements k8sconnect_object.
type Resource struct {
	clients   *connection.Cache
	verbosity ownership.Verbosity
	phase     *providerdata.Phase // tells the engine's re-plan during apply from its plan
	// handOnPlans: a plan hands what it read and its dry run's answer on to
	// the engine's next plan of the object (providerdata.Data.PlansRepeat).
	handOnPlans bool
}

// New returns the resource; the provider passes it a client cache in Configure.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID                     types.String `tfsdk:"id"`
	YAMLBody               types.String `tfsdk:"yaml_body"`
	IgnoreFields           types.List   `tfsdk:"ignore_fields"`
	SensitiveFields        types.List   `tfsdk:"sensitive_fields"`
	ClusterConnection      types.Object `tfsdk:"cluster_connection"`
	ResourceRef            types.Object `tfsdk:"resource_ref"`
	ManagedStateProjection types.Map    `tfsdk:"managed_state_projection"`
	FieldOwnership         types.Map    `tfsdk:"field_ownership"`
	DeleteTimeout          types.String `tfsdk:"delete_timeout"`
	DeleteProtection       types.Bool   `tfsdk:"delete_protection"`
	ForceDestroy           types.Bool   `tfsdk:"force_destroy"`
	UID                    types.String `tfsdk:"uid"`
	ClusterUID             types.String `tfsdk:"cluster_uid"`
}

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object"
}

func (r *Resource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "One Kubernetes object of any kind, applied with Server-Side Apply.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Description: "Random identifier of this resource, fixed at creation and written to the object's " +
					annotationOwnedBy + " annotation.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"yaml_body": schema.StringAttribute{
				Description: "The object as YAML: exactly one document with apiVersion, kind and metadata.name. " +
					"A change of apiVersion, kind, name or namespace replaces the object. For a Secret, wrap it in " +
					"sensitive() so plans hide it (Pulumi marks a Secret's yamlBody secret by itself).",
				Required: true,
			},
			"ignore_fields": schema.ListAttribute{
				Description: "Fields to leave to other managers, e.g. `spec.replicas` for an HPA or " +
					"`spec.template.spec.containers[name=app].image`. kubectl's JSONPath forms work too: " +
					"`containers[?(@.name=='app')]`, `labels['app.kubernetes.io/name']`, and `containers[*].image` " +
					"for every element. They are left out of the apply and out of drift detection; a field newly " +
					"listed is handed over with its current value, not reset.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"sensitive_fields": sensitiveFieldsAttribute,
			"delete_timeout": schema.StringAttribute{
				Description: "How long destroy waits for the object to disappear, e.g. \"90s\" or \"15m\". " +
					"Defaults to 10m for Namespaces, CRDs, PersistentVolumes, PersistentVolumeClaims and " +
					"StatefulSets, 5m for everything else.",
				Optional:   true,
				Validators: []validator.String{durationValidator{}},
			},
			"delete_protection": schema.BoolAttribute{
				Description: "Refuse to destroy (or replace) the object. Set it to false and apply before destroying.",
				Optional:    true,
			},
			"force_destroy": schema.BoolAttribute{
				Description: "When destroy times out waiting for finalizers, remove them and wait once more. " +
					"The controllers behind those finalizers do not get to clean up: use with care.",
				Optional: true,
			},
			"uid": schema.StringAttribute{
				Description: "The UID the API server gave the object when this resource created (or imported) it. " +
					"Update, refresh and destroy act only on the object with this UID: an object deleted and " +
					"re-created by someone else under the same name is never changed or deleted.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster_uid": schema.StringAttribute{
				Description: "The UID of the kube-system namespace of the cluster the object was created in: the " +
					"cluster's identity. When cluster_connection later reaches another cluster (a switched context, " +
					"an edited kubeconfig), plan and refresh fail naming both instead of planning a create there. " +
					"Empty when the credentials may not read kube-system.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"resource_ref": resourceref.Attribute(connection.Computed,
				"The object's identity and connection, for k8sconnect_wait.resource_ref."),
			"managed_state_projection": schema.MapAttribute{
				Description: "The fields k8sconnect owns and their values as the server stores them " +
					"(after defaulting and normalisation), keyed by path. Drift is judged on this. Sensitive values " +
					"(a Secret's data and stringData, sensitive_fields) are `(sensitive, hmac-sha256:<16 hex>)`.",
				ElementType: types.StringType,
				Computed:    true,
			},
			"field_ownership": schema.MapAttribute{
				Description: "For each field k8sconnect manages or was told to ignore: every field manager that " +
					"owns it. Several managers share a field when they applied the same value.",
				ElementType: types.ListType{ElemType: types.StringType},
				Computed:    true,
			},
		},
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		r.clients, r.verbosity, r.phase, r.handOnPlans = data.Clients, data.OwnershipMessages, data.Phase, data.PlansRepeat
	}
}

func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg model
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, _ = desiredFromConfig(ctx, cfg, &resp.Diagnostics)
	_ = redactor(ctx, cfg, &resp.Diagnostics)
	refusePlaceholders(cfg, &resp.Diagnostics)
}

func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.phase.Applying()
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.ID.IsUnknown() {
		plan.ID = types.StringValue(newID())
	}
	r.applyAndRecord(ctx, &plan, nil, resp.Private, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.phase.Applying()
	var plan, prior model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, moving := pendingMove(ctx, req.Private); moving || !onlyConnectionChanged(ctx, plan, prior) || !r.readOwnership(ctx, &plan, req.Private, resp.Private, &resp.Diagnostics) {
		r.applyAndRecord(ctx, &plan, &prior, resp.Private, &resp.Diagnostics)
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Read refreshes the projection from the live object, so external changes to
// fields we own show as a diff on the next plan. It forgets the object only on
// a definite answer that it is gone: NotFound, a kind the cluster no longer
// serves, or an object of the same name with another UID. Refused credentials,
// server errors and broken connections keep state and warn.
func (r *Resource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state model
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ref, diags := resourceref.FromObject(ctx, state.ResourceRef)
	resp.Diagnostics.Append(diags...)
	_, moving := pendingMove(ctx, req.Private)
	if moving && state.ClusterConnection.IsNull() && (r.clients == nil || !r.clients.HasDefault()) {
		// Moved from a provider whose connection was its own: the plan
		// reads the object through this configuration's connection.
		markRefreshSkipped(ctx, resp.Private, true)
		return
	}
	c, ok := r.client(ctx, state.ClusterConnection, &resp.Diagnostics)
	if !ok {
		return
	}
	id := ref.Identity()
	if moving && id.Namespace == "" {
		id = inScope(c, id)
		state.ResourceRef, diags = resourceref.Value(ctx, id, types.StringValue(id.Namespace), state.ClusterConnection)
		resp.Diagnostics.Append(diags...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("resource_ref"), state.ResourceRef)...)
	}
	keep := func(err error) {
		resp.Diagnostics.AddWarning("Could not refresh "+id.String()+"; state kept as it was",
			fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
	}
	// Credentials stored at the last apply and refused now (a rotated
	// token): the plan reads with the configuration's connection instead.
	stale := func(err error) bool {
		if connection.StaleCredentials(err, id.String(), &resp.Diagnostics) {
			markRefreshSkipped(ctx, resp.Private, true)
			return true
		}
		return false
	}
	cluster, err := c.CheckCluster(ctx, state.ClusterUID.ValueString(), id.String())
	var other *connection.OtherClusterError
	switch {
	case errors.As(err, &other):
		resp.Diagnostics.AddError("The connection reaches another cluster", err.Error())
		return
	case err != nil:
		if !stale(err) {
			keep(err)
		}
		return
	}
	seen := time.Now()
	live, err := get(ctx, c, id)
	if stale(err) {
		return
	}
	markRefreshSkipped(ctx, resp.Private, false)
	switch {
	case apierrors.IsNotFound(err):
		resp.State.RemoveResource(ctx)
		return
	case meta.IsNoMatchError(err):
		gone, derr := c.KindGone(id.GVK())
		if gone {
			resp.State.RemoveResource(ctx)
		} else {
			keep(cmp.Or(derr, err))
		}
		return
	case err != nil && connection.Unreachable(err):
		keep(err)
		return
	case err != nil:
		resp.Diagnostics.AddError("Read failed", fmt.Sprintf("Reading %s: %v", id, err))
		return
	}
	if msg := notOurs(live, state.ID.ValueString(), state.UID.ValueString()); msg != "" {
		if !state.UID.IsNull() && string(live.GetUID()) != state.UID.ValueString() {
			// The object this resource created is gone; the one in its place
			// belongs to someone else and is left alone.
			resp.Diagnostics.AddWarning("The object was replaced by someone else", msg+
				" This resource no longer has an object: the next plan proposes to create it, and the create "+
				"refuses while the other object exists. Rename or remove one of the two.")
			resp.State.RemoveResource(ctx)
			return
		}
		resp.Diagnostics.AddWarning("Another k8sconnect resource claims this object", msg+
			" Two resources now manage one object and will undo each other's changes. Remove one of them "+
			"(terraform state rm, tofu state rm or pulumi state delete).")
	}
	remember(c, live, seen, nil, nil)
	recordInState(c, id, state.ID.ValueString())
	ignore, _ := ignorePaths(ctx, state.IgnoreFields, &resp.Diagnostics)
	prev, err := privatestate.LoadFieldSet(ctx, req.Private, privatestate.OwnedFields)
	if err != nil {
		resp.Diagnostics.AddWarning("Could not read the previously owned fields", err.Error())
	}
	obs, err := observe(live, prev, ignore, redactor(ctx, state, &resp.Diagnostics))
	if err != nil {
		resp.Diagnostics.AddError("Read failed", err.Error())
		return
	}
	resp.Diagnostics.Append(ownership.Refreshed(ctx, resp.Private, ownership.StateProjection(ctx, state.ManagedStateProjection), obs.Projection)...)
	resp.Diagnostics.Append(into(ctx, obs, &state)...)
	state.UID = types.StringValue(string(live.GetUID()))
	if state.ClusterUID.IsNull() || state.ClusterUID.IsUnknown() {
		state.ClusterUID = types.StringValue(cluster)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Delete deletes the object this resource created and nothing else: the
// object must carry this resource's id and UID, and the delete is bound to that
// UID, so an object someone re-created under the same name survives.
func (r *Resource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.phase.Applying()
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
	id := ref.Identity()
	if _, moving := pendingMove(ctx, req.Private); moving && id.Namespace == "" {
		id = inScope(c, id) // destroyed right after the move
	}
	if state.DeleteProtection.ValueBool() {
		resp.Diagnostics.AddError("Delete protection is on",
			fmt.Sprintf("%s has delete_protection = true. Set it to false and apply, then destroy (or replace) it.", id))
		return
	}
	if _, err := c.CheckCluster(ctx, state.ClusterUID.ValueString(), id.String()); err != nil {
		resp.Diagnostics.AddError("Delete refused: cannot confirm the cluster", fmt.Sprintf("%v\n\n%s", err, connection.Remedy(err)))
		return
	}
	timeout := deleteTimeoutFor(id.Kind, state.DeleteTimeout)
	forget(c, id)
	err := deleteAndWait(ctx, c, id, timeout, func(live *unstructured.Unstructured) string {
		return notOurs(live, state.ID.ValueString(), state.UID.ValueString())
	})
	var stuck *stuckError
	var left *leftInPlaceError
	switch {
	case errors.As(err, &left):
		resp.Diagnostics.AddWarning("Left in place: not this resource's object", left.Error())
		return
	case errors.As(err, &stuck) && state.ForceDestroy.ValueBool():
		tflog.Warn(ctx, "force_destroy: removing finalizers", map[string]any{"object": id.String(), "finalizers": stuck.finalizers})
		err = removeFinalizersAndWait(ctx, c, id, stuck.uid)
	}
	if err != nil {
		resp.Diagnostics.AddError("Delete failed", err.Error())
	}
}

var pathYAMLBody = path.Root("yaml_body")
