// Package manifestset is the k8sconnect_manifest_set resource (ADR 0016): a
// bundle of manifests (multi-document YAML, files of a directory, a
// kustomization) held as one resource, whose every object is planned,
// applied and checked for drift as k8sconnect_object does it, and whose
// membership is kubectl's ApplySet, so that an object that leaves the source
// is pruned and `kubectl` sees the same set.
//
// The files are laid out as the verbs: plan.go plans (ModifyPlan: read the
// source, dry-run every object), apply.go creates and updates (prepare,
// perform, record), read.go refreshes, delete.go destroys. They call into
// the files that hold what they share: source.go turns the source into the
// set's members, applyset.go is the parent and its marks, private.go the
// private state. What every set does alike (ignore_fields, projections in
// objects, kind order, parallel requests) is package objectset's.
package manifestset

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// Resource is k8sconnect_manifest_set.
type Resource struct {
	clients   *connection.Cache
	verbosity ownership.Verbosity
	version   string
	// plansRepeat: the engine is Pulumi, whose bridge marks a yamlBody that
	// holds a Secret secret (providerdata.Data.PlansRepeat).
	plansRepeat bool
}

var (
	_ resource.Resource               = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan = (*Resource)(nil)
	_ resource.ResourceWithConfigure  = (*Resource)(nil)
)

// New is the resource's constructor, for the provider's list.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID                 types.String `tfsdk:"id"`
	YAMLBody           types.String `tfsdk:"yaml_body"`
	YAMLBodyWO         types.String `tfsdk:"yaml_body_wo"`
	YAMLBodyWORevision types.Int64  `tfsdk:"yaml_body_wo_revision"`
	Path               types.String `tfsdk:"path"`
	Recursive          types.Bool   `tfsdk:"recursive"`
	Kustomization      types.String `tfsdk:"kustomization"`
	KustomizeOptions   types.Object `tfsdk:"kustomize_options"`
	Namespace          types.String `tfsdk:"namespace"`
	IgnoreFields       types.Map    `tfsdk:"ignore_fields"`
	Prune              types.Bool   `tfsdk:"prune"`
	TakeOwnership      types.Bool   `tfsdk:"take_ownership"`
	DeleteProtection   types.Bool   `tfsdk:"delete_protection"`
	Wait               types.Bool   `tfsdk:"wait"`
	Timeout            types.String `tfsdk:"timeout"`
	ApplySet           types.Object `tfsdk:"applyset"`
	ClusterConnection  types.Object `tfsdk:"cluster_connection"`

	Objects    types.Map       `tfsdk:"objects"`
	ApplySetID types.String    `tfsdk:"applyset_id"`
	ClusterUID types.String    `tfsdk:"cluster_uid"`
	Timeouts   optimeout.Value `tfsdk:"timeouts"`
}

var (
	pathObjects      = path.Root("objects")
	pathIgnoreFields = path.Root("ignore_fields")
	pathYAMLBody     = path.Root("yaml_body")
	pathYAMLBodyWO   = path.Root("yaml_body_wo")
	pathPath         = path.Root("path")
	pathKustomize    = path.Root("kustomization")
	pathTimeout      = path.Root("timeout")
	pathApplySet     = path.Root("applyset")
)

// DefaultTimeout bounds the apply's waits: for a CRD of the set to be
// served, for a pruned object to be gone, and for the objects to be ready.
const DefaultTimeout = "5m"

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_manifest_set"
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	sources := []path.Expression{path.MatchRoot("yaml_body"), path.MatchRoot("yaml_body_wo"), path.MatchRoot("path"),
		path.MatchRoot("kustomization")}
	resp.Schema = schema.Schema{
		Blocks: map[string]schema.Block{"timeouts": optimeout.Block(ctx)},
		Description: "A bundle of manifests held as one resource (multi-document YAML, the files of a directory, or " +
			"a kustomization), whose every object is planned, applied and checked for drift as k8sconnect_object " +
			"does it: `objects` holds, per object, the fields k8sconnect owns as a server-side dry run predicts " +
			"them, so a plan shows which objects are added, changed (field by field) or removed. Objects are " +
			"applied CRDs first, then cluster-scoped ones, then the rest, kind by kind in Helm's install order. " +
			"Membership is kubectl's ApplySet: the parent Secret and every member carry its labels and annotations " +
			"as `kubectl apply --prune --applyset` writes them, and an object that leaves the source is deleted.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true,
				Description:   "The ApplySet parent, `<namespace>/<name>`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"yaml_body": schema.StringAttribute{Optional: true,
				Validators: []validator.String{stringvalidator.ExactlyOneOf(sources...)},
				Description: "The manifests as multi-document YAML (a `List` kind is expanded). Kept in state and " +
					"shown in plans: a set that holds a Secret is better read from files, with `path` or " +
					"`kustomization`, or give it by yaml_body_wo. Exactly one of yaml_body, yaml_body_wo, path and " +
					"kustomization."},
			"yaml_body_wo": schema.StringAttribute{Optional: true, WriteOnly: true,
				Description: "The manifests as yaml_body, but write-only: never kept in state, never shown in a " +
					"plan. Needs Terraform 1.11 or OpenTofu 1.11 or later. Every plan still dry-runs every object, so " +
					"a changed value shows as a changed keyed hash in objects, and so does drift. An apply sends the " +
					"objects whose plan changed, and every object when yaml_body_wo_revision changes."},
			"yaml_body_wo_revision": schema.Int64Attribute{Optional: true,
				Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("yaml_body_wo"))},
				Description: "Any number, kept in state beside yaml_body_wo: changing it plans an apply of " +
					"yaml_body_wo even when nothing would change, and records in state that a new body was applied."},
			"path": schema.StringAttribute{Optional: true,
				Description: "A file, a directory (its `.yaml`, `.yml` and `.json` files; with `recursive`, those " +
					"of its subdirectories too) or a glob (`manifests/*.yaml`, `**` for any depth), relative to the " +
					"directory the engine runs in (`${path.module}/...` in Terraform)."},
			"recursive": schema.BoolAttribute{Optional: true,
				Description: "With a directory `path`, read its subdirectories too. Defaults to false."},
			"kustomization": schema.StringAttribute{Optional: true,
				Description: "A kustomization directory, built in-process as `kubectl kustomize` builds it, with " +
					"the flags kustomize_options sets."},
			"kustomize_options": yamldocs.KustomizeOptionsResourceAttribute(path.MatchRoot("kustomization")),
			"namespace": schema.StringAttribute{Optional: true,
				Description: "The namespace of every namespaced object that sets none, as `kubectl apply -n`, and of " +
					"the default ApplySet parent. Defaults to `default`."},
			"ignore_fields": schema.MapAttribute{ElementType: types.ListType{ElemType: types.StringType}, Optional: true,
				Description: "Fields of the set's objects to leave to other managers, such as `spec.replicas` of " +
					"a Deployment an HPA scales. Keys are object keys as `objects` shows them, in which `*` matches " +
					"any one part (`apps/Deployment/*/*` for every Deployment of the set); values list fields in " +
					"k8sconnect_object's ignore_fields path language. They are left out of the apply and of drift " +
					"detection; a field newly listed is handed over with its current value, not reset."},
			"prune": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Delete an object that leaves the source (bound to its UID, and only while it still " +
					"carries this set's `applyset.kubernetes.io/part-of` label). With false, it is left in the " +
					"cluster as it is and taken out of the set. Defaults to true."},
			"take_ownership": schema.BoolAttribute{Optional: true,
				Description: "Take over objects of the source that exist already and belong to no other set (made " +
					"with kubectl, by a k8sconnect_object taken out of state, by a tool since removed), as " +
					"hashicorp/helm's take_ownership and `helm --take-ownership`: each plan warns of every object it " +
					"takes and from whom, and the apply hands their field managers' fields to the set. Without it such " +
					"an object is refused at plan. An object of another set is refused either way. Defaults to false."},
			"delete_protection": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Refuse to destroy the set (and so anything that would delete its objects) until this " +
					"is set to false and applied."},
			"wait": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Wait until every object the apply changed is ready, by the rule of k8sconnect_wait's " +
					"`ready` (kstatus: Deployments rolled out, PersistentVolumeClaims bound, custom resources by " +
					"their conditions, one without status ready), as k8sconnect_helm_release's wait; a Job is ready " +
					"once it has started. A timeout fails the run and names what is not ready, without tainting: the " +
					"objects stay applied, and the next apply waits again. Defaults to true."},
			"timeout": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(DefaultTimeout),
				Validators: []validator.String{durations.Validator{}},
				Description: "How long the apply may wait, in all: for a CRD of the set to be served, for a pruned " +
					"object to be gone, and with wait for the objects to be ready (a Go duration, `5m`, `90s`)."},
			"applyset": schema.SingleNestedAttribute{Optional: true, Computed: true,
				PlanModifiers: []planmodifier.Object{objectplanmodifier.UseStateForUnknown(), objectplanmodifier.RequiresReplaceIf(anotherParent,
					"Naming another parent makes another set.", "Naming another parent makes another set.")},
				Description: "The ApplySet parent, the object the set's membership is recorded on (kubectl's " +
					"`--applyset`). Without it, a Secret named `k8sconnect-set-<hash>` in `namespace`, which applyset " +
					"then shows. Naming another parent makes another set (a replacement); taking applyset out of the " +
					"configuration keeps the parent the set has.",
				Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Required: true, Description: "The parent's name."},
					"namespace": schema.StringAttribute{Optional: true,
						Description: "The parent's namespace. Defaults to the set's `namespace`, else `default`; none " +
							"for a cluster-scoped custom resource."},
					"kind": schema.StringAttribute{Optional: true,
						Description: "`Secret` (the default, as kubectl's), `ConfigMap`, or the kind of a custom " +
							"resource whose CustomResourceDefinition carries the label " +
							"`applyset.kubernetes.io/is-parent-type: \"true\"`, as kubectl requires. A custom resource " +
							"parent must exist before the set (kubectl does not create one either); the set writes its " +
							"marks on it and, when destroyed, takes them off and leaves it."},
					"api_version": schema.StringAttribute{Optional: true,
						Description: "The parent's apiVersion: `v1` (the default) for a Secret or ConfigMap, the " +
							"custom resource's own (`example.com/v1`) for one."},
				}},
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"objects": schema.MapAttribute{ElementType: objectset.ProjectionType, Computed: true,
				Description: "Every object of the set, keyed by `<group>/<Kind>/<namespace>/<name>` " +
					"(`<group>/<Kind>/<name>` for a cluster-scoped kind) as k8sconnect_yaml_scoped keys them, each " +
					"the map of the fields k8sconnect owns to their values, as k8sconnect_object's " +
					"managed_state_projection. Secret data shows as a keyed hash, never the value."},
			"applyset_id": schema.StringAttribute{Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Description: "The ApplySet's id, as kubectl computes it from the parent: the value of the parent's " +
					"`applyset.kubernetes.io/id` label and of every member's `applyset.kubernetes.io/part-of`."},
			"cluster_uid": schema.StringAttribute{Computed: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Description:   connection.IdentityDescription("the set was created in")},
		},
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		r.clients, r.verbosity, r.version, r.plansRepeat = data.Clients, data.OwnershipMessages, data.Version, data.PlansRepeat
	}
}

// anotherParent asks for a replacement when applyset names a parent other
// than the set's: only then is it another set. Written out with its
// defaults (the kind, the set's namespace), or taken out of the
// configuration, it names the same one, as after an import.
func anotherParent(ctx context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
	if req.PlanValue.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var id, ns types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("namespace"), &ns)...)
	if resp.Diagnostics.HasError() || req.PlanValue.IsUnknown() || ns.IsUnknown() {
		resp.RequiresReplace = !req.PlanValue.Equal(req.StateValue)
		return
	}
	planned, _ := parentNamed(req.PlanValue, namespaceOf(&model{Namespace: ns}))
	current := parentInState(id.ValueString(), req.StateValue)
	if current.custom() && current.Namespace == "" {
		planned.Namespace = "" // cluster-scoped: scoped drops any namespace
	}
	resp.RequiresReplace = planned != current
}
