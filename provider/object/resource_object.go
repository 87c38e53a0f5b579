package object

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
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
	ID                     types.String    `tfsdk:"id"`
	YAMLBody               types.String    `tfsdk:"yaml_body"`
	YAMLBodyWO             types.String    `tfsdk:"yaml_body_wo"`
	YAMLBodyWORevision     types.Int64     `tfsdk:"yaml_body_wo_revision"`
	IgnoreFields           types.List      `tfsdk:"ignore_fields"`
	SensitiveFields        types.List      `tfsdk:"sensitive_fields"`
	ClusterConnection      types.Object    `tfsdk:"cluster_connection"`
	ResourceRef            types.Object    `tfsdk:"resource_ref"`
	ManagedStateProjection types.Map       `tfsdk:"managed_state_projection"`
	FieldOwnership         types.Map       `tfsdk:"field_ownership"`
	DeleteTimeout          types.String    `tfsdk:"delete_timeout"`
	DeleteProtection       types.Bool      `tfsdk:"delete_protection"`
	ForceDestroy           types.Bool      `tfsdk:"force_destroy"`
	UID                    types.String    `tfsdk:"uid"`
	ClusterUID             types.String    `tfsdk:"cluster_uid"`
	Timeouts               optimeout.Value `tfsdk:"timeouts"`
}

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_object"
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Blocks:      map[string]schema.Block{"timeouts": optimeout.Block(ctx)},
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
					"A change of apiVersion, kind, name or namespace replaces the object. Exactly one of yaml_body " +
					"and yaml_body_wo. " + yamlBodyInState,
				Optional:   true,
				Validators: []validator.String{stringvalidator.ExactlyOneOf(path.MatchRoot("yaml_body_wo"))},
			},
			"yaml_body_wo": schema.StringAttribute{
				Description: "The object as YAML, as yaml_body, but write-only: never kept in state, never shown in " +
					"a plan. " + writeOnlyEngines + " Every plan still dry-runs it, so a changed value shows as a " +
					"changed `(sensitive, hmac-sha256:...)` entry of managed_state_projection, and so does drift; " +
					"every apply sends it in full, so Server-Side Apply keeps every field it sets owned. Use it for a " +
					"Secret: a Secret given by yaml_body gets a warning at plan time.",
				Optional:  true,
				WriteOnly: true,
				// Not Sensitive too: engines print a write-only value nowhere,
				// and a sensitive attribute costs an entry in every
				// instance's state (see connection.CopyAttribute).
			},
			"yaml_body_wo_revision": schema.Int64Attribute{
				Description: "Any number, kept in state beside yaml_body_wo. A change of yaml_body_wo is planned " +
					"whenever the server would store something else, revision or not; changing the revision " +
					"plans an apply of yaml_body_wo even when nothing would change (to take back fields that " +
					"another manager took over, say), and records in state that a new body was applied.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("yaml_body_wo"))},
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
				Validators: []validator.String{durations.Validator{}},
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
				Description:   connection.IdentityDescription("the object was created in"),
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"resource_ref": resourceref.Attribute(connection.Computed,
				"The object's identity and connection, for k8sconnect_wait.resource_ref."),
			"managed_state_projection": schema.MapAttribute{
				Description: "The fields k8sconnect owns and their values as the server stores them " +
					"(after defaulting and normalisation), keyed by path. Drift is judged on this. Sensitive values " +
					"(a Secret's data and stringData, sensitive_fields) are `(sensitive, hmac-sha256:<16 hex>)`. A value " +
					"longer than 64 KiB (a CRD's `spec.versions`, which `yaml_body` holds already) is its length and " +
					"digest, `(<bytes> bytes, sha256:<64 hex>)`; a plan that changes one names the fields that change " +
					"inside it in a warning.",
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

// yamlBodyInState and writeOnlyEngines are sentences the Pulumi docs replace
// with their own (bridge/sdkgen's pulumiTerms).
const (
	yamlBodyInState  = "Kept in state and shown in plans: for a Secret, or anything else that holds a credential, use yaml_body_wo instead."
	writeOnlyEngines = "Needs Terraform 1.11 or OpenTofu 1.11 or later."
)

var pathYAMLBody = path.Root("yaml_body")

var pathYAMLBodyWO = path.Root("yaml_body_wo")

var pathProjection = path.Root("managed_state_projection")

// client returns the cached client for a cluster_connection value.
func (r *Resource) client(ctx context.Context, conn types.Object, diags *diag.Diagnostics) (*connection.Client, bool) {
	return r.clients.ClientFor(ctx, conn, diags)
}
