// Package patch is the k8sconnect_patch resource (ADR 0006): surgical changes to
// objects this configuration does not own, such as a cloud provider's aws-node
// DaemonSet, an operator's objects or a Helm release.
//
// Each patch applies under its own field manager, k8sconnect-patch-<id>, with
// force, so it takes exactly the fields it names, shows drift on exactly those,
// and on destroy releases exactly those: the values stay, our manager leaves
// managedFields, nothing is reverted.
package patch

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure      = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan     = (*Resource)(nil)
	_ resource.ResourceWithValidateConfig = (*Resource)(nil)
)

// Resource implements k8sconnect_patch.
type Resource struct {
	clients   *connection.Cache
	verbosity ownership.Verbosity
	phase     *providerdata.Phase // told when applying starts
	// pulumi: the bridge marks a Secret's patch content secret by itself.
	pulumi bool
}

// New returns the resource.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID                types.String    `tfsdk:"id"`
	Target            types.Object    `tfsdk:"target"`
	Patch             types.String    `tfsdk:"patch"`
	PatchWO           types.String    `tfsdk:"patch_wo"`
	PatchWORevision   types.Int64     `tfsdk:"patch_wo_revision"`
	JSONPatch         types.String    `tfsdk:"json_patch"`
	JSONPatchWO       types.String    `tfsdk:"json_patch_wo"`
	JSONPatchWORev    types.Int64     `tfsdk:"json_patch_wo_revision"`
	MergePatch        types.String    `tfsdk:"merge_patch"`
	MergePatchWO      types.String    `tfsdk:"merge_patch_wo"`
	MergePatchWORev   types.Int64     `tfsdk:"merge_patch_wo_revision"`
	TakeOwnership     types.Bool      `tfsdk:"take_ownership"`
	ClusterConnection types.Object    `tfsdk:"cluster_connection"`
	ManagedFields     types.Map       `tfsdk:"managed_fields"`
	FieldOwnership    types.Map       `tfsdk:"field_ownership"`
	PreviousOwners    types.Map       `tfsdk:"previous_owners"`
	ClusterUID        types.String    `tfsdk:"cluster_uid"`
	Timeouts          optimeout.Value `tfsdk:"timeouts"`
}

type targetModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Kind       types.String `tfsdk:"kind"`
	Name       types.String `tfsdk:"name"`
	Namespace  types.String `tfsdk:"namespace"`
}

var ownersType = types.ListType{ElemType: types.StringType}

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_patch"
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Blocks: map[string]schema.Block{"timeouts": optimeout.Block(ctx)},
		Description: "Changes a few fields of an object that something else manages (a cloud provider, an operator, " +
			"Helm), taking ownership of exactly those fields. Destroy releases them and leaves their values in place. " +
			"Not for objects managed by k8sconnect_object.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Description: "Derived from the target and the patch as first created; the field manager is k8sconnect-patch-<id>. " +
					"A create that landed but failed to finish (a lost response, a killed run) is completed by the next apply under the same manager.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"target": schema.SingleNestedAttribute{
				Description: "The object to patch. It must exist. Changing the target replaces the patch.",
				Required:    true,
				Attributes: map[string]schema.Attribute{
					"api_version": schema.StringAttribute{Required: true, Description: "apiVersion, e.g. apps/v1."},
					"kind":        schema.StringAttribute{Required: true, Description: "Kind, e.g. DaemonSet."},
					"name":        schema.StringAttribute{Required: true, Description: "Name."},
					"namespace":   schema.StringAttribute{Optional: true, Description: "Namespace; leave out for cluster-scoped kinds."},
				},
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
			},
			"patch": schema.StringAttribute{
				Description: "The fields to set, as YAML or JSON, in the shape of the object (strategic-merge style): " +
					"lists such as containers and env merge by their keys. Applied with Server-Side Apply.",
				Optional: true,
				// On one attribute, as the object's yaml_body has it: the
				// Pulumi bridge runs attribute validators, and its preview let
				// two inputs through with a resource-level ExactlyOneOf.
				Validators: []validator.String{stringvalidator.ExactlyOneOf(inputPaths()...)},
			},
			"patch_wo":          writeOnlyAttribute("patch"),
			"patch_wo_revision": revisionAttribute("patch_wo"),
			"json_patch": schema.StringAttribute{
				Description: "An RFC 6902 JSON Patch: a JSON array of operations (add, remove, replace, move, copy, test).",
				Optional:    true,
			},
			"json_patch_wo":          writeOnlyAttribute("json_patch"),
			"json_patch_wo_revision": revisionAttribute("json_patch_wo"),
			"merge_patch": schema.StringAttribute{
				Description: "An RFC 7386 JSON Merge Patch, as YAML or JSON; null deletes a key, lists are replaced whole.",
				Optional:    true,
			},
			"merge_patch_wo":          writeOnlyAttribute("merge_patch"),
			"merge_patch_wo_revision": revisionAttribute("merge_patch_wo"),
			"take_ownership": schema.BoolAttribute{
				Description: "Must be true: acknowledges that the patch forcibly takes the fields from their current managers.",
				Required:    true,
			},
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"managed_fields": schema.MapAttribute{
				Description: "The patched fields and their live values, keyed by path. Drift is judged on these only. " +
					"A value longer than 64 KiB is its length and digest, `(<bytes> bytes, sha256:<64 hex>)`.",
				ElementType: types.StringType,
				Computed:    true,
			},
			"field_ownership": schema.MapAttribute{
				Description: "For each patched field, every manager that owns it now.",
				ElementType: ownersType,
				Computed:    true,
			},
			"previous_owners": schema.MapAttribute{
				Description: "For each patched field, the managers that owned it before this patch first took it.",
				ElementType: ownersType,
				Computed:    true,
			},
			"cluster_uid": schema.StringAttribute{
				Description:   connection.IdentityDescription("the target was patched in"),
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		r.clients, r.verbosity, r.phase, r.pulumi = data.Clients, data.OwnershipMessages, data.Phase, data.PlansRepeat
	}
}

// ValidateConfig rejects what can be judged without the cluster.
func (r *Resource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m model
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.TakeOwnership.IsUnknown() && !m.TakeOwnership.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("take_ownership"), "take_ownership must be true",
			"A patch always takes its fields by force from whichever manager owns them now (a cloud provider's "+
				"addon manager, an operator, Helm). Set take_ownership = true to acknowledge that:\n"+
				"  1. the patch forcibly transfers ownership of the fields it sets;\n"+
				"  2. the previous manager may change them back, which shows as drift on the next plan;\n"+
				"  3. destroying the patch releases the fields but does not restore their old values.")
	}
	refuseOldEngines(m, req.ClientCapabilities, &resp.Diagnostics)
	if _, ok := m.given(); !ok {
		return // the validator of patch says which inputs to set
	}
	if _, err := parseContent(m); err != nil {
		resp.Diagnostics.AddAttributeError(contentPath(m), "Invalid patch", err.Error())
	}
}

// refuseOldEngines names the versions that take a write-only input when the
// engine does not say it can: an engine that cannot would store the value in
// state or fail on the null the provider returns for it. The framework
// refuses it too, naming Terraform alone.
func refuseOldEngines(m model, caps resource.ValidateConfigClientCapabilities, diags *diag.Diagnostics) {
	if caps.WriteOnlyAttributesAllowed {
		return
	}
	for _, in := range inputs {
		if !in.writeOnly || m.text(in).IsNull() {
			continue
		}
		diags.AddAttributeError(in.path(), in.attr+" needs Terraform 1.11 or OpenTofu 1.11",
			fmt.Sprintf("%s is a write-only attribute, which this engine does not support: it needs Terraform 1.11 or "+
				"later, or OpenTofu 1.11 or later. Upgrade the engine, or give the patch by %s (wrapped in "+
				"sensitive() when it holds a credential), which is kept in state.", in.attr, in.twin))
	}
}

// inputPaths are the paths of the six patch inputs, patch's own among them
// so that the validator's message names all six.
func inputPaths() []path.Expression {
	out := make([]path.Expression, len(inputs))
	for i, in := range inputs {
		out[i] = path.MatchRoot(in.attr)
	}
	return out
}

// writeOnlyAttribute is the write-only twin of the patch input kept.
func writeOnlyAttribute(kept string) schema.StringAttribute {
	return schema.StringAttribute{
		Description: fmt.Sprintf("As %[1]s, but write-only: never kept in state, never shown in a "+
			"plan. "+writeOnlyEngines+" Every plan still dry-runs it, so a changed value shows in "+
			"managed_fields (as `(sensitive, hmac-sha256:...)` for a Secret's data), and every apply sends "+
			"it in full, so the patch keeps every field it sets. Use it to patch a credential into a Secret.", kept),
		Optional:  true,
		WriteOnly: true,
	}
}

// revisionAttribute goes beside one write-only input, and only beside it: a
// user who writes merge_patch_wo looks for merge_patch_wo_revision, as for
// yaml_body_wo and patch_wo.
func revisionAttribute(writeOnly string) schema.Int64Attribute {
	return schema.Int64Attribute{
		Description: fmt.Sprintf("Any number, kept in state beside %[1]s. A change of %[1]s is planned whenever "+
			"the server would store something else, revision or not; changing the revision plans an apply "+
			"of %[1]s even when nothing would change.", writeOnly),
		Optional:   true,
		Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot(writeOnly))},
	}
}

func targetOf(ctx context.Context, obj types.Object) (manifest.Identity, bool) {
	if obj.IsNull() || obj.IsUnknown() {
		return manifest.Identity{}, false
	}
	var t targetModel
	if diags := obj.As(ctx, &t, basetypes.ObjectAsOptions{}); diags.HasError() {
		return manifest.Identity{}, false
	}
	for _, v := range []types.String{t.APIVersion, t.Kind, t.Name, t.Namespace} {
		if v.IsUnknown() {
			return manifest.Identity{}, false
		}
	}
	return manifest.Identity{APIVersion: t.APIVersion.ValueString(), Kind: t.Kind.ValueString(),
		Name: t.Name.ValueString(), Namespace: t.Namespace.ValueString()}, true
}

// FieldManager is the manager name of one patch.
func FieldManager(id string) string { return "k8sconnect-patch-" + id }

func (r *Resource) client(ctx context.Context, conn types.Object, diags *diag.Diagnostics) (*connection.Client, bool) {
	return r.clients.ClientFor(ctx, conn, diags)
}

// stored is what Read and Delete start from: the patch's state, its target,
// and a client for its cluster. ok is false when there is nothing to do: the
// state could not be read or has no known target, or no client could be made
// (the error, if any, is in diags).
func (r *Resource) stored(ctx context.Context, st tfsdk.State, diags *diag.Diagnostics) (state model, target manifest.Identity, c *connection.Client, ok bool) {
	diags.Append(st.Get(ctx, &state)...)
	if diags.HasError() {
		return state, target, nil, false
	}
	if target, ok = targetOf(ctx, state.Target); !ok {
		return state, target, nil, false
	}
	c, ok = r.client(ctx, state.ClusterConnection, diags)
	return state, target, c, ok
}
