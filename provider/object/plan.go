package object

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
	"github.com/k8sconnect/k8sconnect/provider/internal/scope"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// ModifyPlan predicts, with a server-side dry run, exactly what the apply will
// store in the fields k8sconnect owns, so the plan shows real changes only.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		var prior model
		if !req.State.Raw.IsNull() && !req.State.Get(ctx, &prior).HasError() {
			r.warnSecretDestroyed(ctx, prior, &resp.Diagnostics)
		}
		return // destroy
	}
	var plan, state model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	creating := req.State.Raw.IsNull()
	if !creating {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ManagedStateProjection = types.MapUnknown(types.StringType)
	plan.FieldOwnership = types.MapUnknown(types.ListType{ElemType: types.StringType})
	defer func() { resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...) }()

	configured := withWriteOnly(ctx, plan, req.Config, &resp.Diagnostics)
	desired, ignore := desiredFromConfig(ctx, configured, &resp.Diagnostics)
	_, at := configured.body()
	if desired == nil {
		plan.ResourceRef = types.ObjectUnknown(resourceref.AttrTypes)
		return
	}
	red := redactor(ctx, plan, &resp.Diagnostics)
	defer red.ScrubDiagnosticsLater(&resp.Diagnostics, desired.Object)()
	id := manifest.IdentityOf(desired)
	if creating || !plan.YAMLBody.Equal(state.YAMLBody) {
		r.warnSecretInYAMLBody(plan, id, &resp.Diagnostics)
	}
	ctx, serverWarnings := connection.CollectWarnings(ctx)
	defer func() { connection.AddWarnings(&resp.Diagnostics, id.String(), serverWarnings()) }()

	p := &planning{req: req, resp: resp, plan: &plan, state: state, desired: desired, id: id, at: at, ignore: ignore, red: red}
	c := r.locate(ctx, p, creating)
	if c == nil {
		return // known after apply, or refused
	}
	identity, ok := objectplan.Cluster(ctx, c, state.ClusterUID.ValueString(), req.Private, p.id.String(), p.id.Namespace, &resp.Diagnostics)
	if !ok {
		return
	}
	plan.ClusterUID = objectplan.ClusterUID(plan.ClusterUID, identity)

	// The id is generated at apply (Terraform plans again during apply and
	// would see a second random value); the annotation is not projected, so a
	// placeholder gives the same dry-run result.
	setOwnedBy(desired, idOrPlaceholder(plan.ID))
	if creating {
		r.checkCreate(ctx, c, desired, p.id, at, resp)
		return // what the create stores, and its owners, are known after apply
	}
	r.planUpdate(ctx, c, p)
}

// planning is what the steps of one plan of the object share.
type planning struct {
	req     resource.ModifyPlanRequest
	resp    *resource.ModifyPlanResponse
	plan    *model
	state   model
	desired *unstructured.Unstructured
	id      manifest.Identity
	at      path.Path // the attribute that holds the body
	ignore  []objectpath.Path
	red     sensitive.Redactor
}

// locate finds where the object lives: the plan's client, its kind, its
// namespace (resource_ref), and whether it is still the object in state, or
// another, which replaces it. It returns the client with the namespace
// filled in, or nil when the plan can go no further: the cluster or the kind
// is known only at apply, or the plan was refused or replaces the object.
func (r *Resource) locate(ctx context.Context, p *planning, creating bool) *connection.Client {
	diags := &p.resp.Diagnostics
	c, ok := objectplan.Client(ctx, r.clients, p.plan.ClusterConnection, diags)
	if !ok {
		return nil
	}
	if c != nil {
		if err := c.MissingCoreKind(p.id.GVK()); err != nil {
			diags.AddAttributeError(p.at, connection.KindSummary(err), fmt.Sprintf("%s: %v", p.id, err))
			p.plan.ResourceRef = types.ObjectUnknown(resourceref.AttrTypes)
			return nil
		}
	}
	namespace := plannedNamespace(c, p.desired)
	ref, d := resourceref.Value(ctx, p.id, namespace, p.plan.ClusterConnection)
	diags.Append(d...)
	p.plan.ResourceRef = ref

	if !creating {
		prev, d := resourceref.FromObject(ctx, p.state.ResourceRef)
		diags.Append(d...)
		prevID := prev.Identity()
		if _, moving := pendingMove(ctx, p.req.Private); moving && prevID.Namespace == "" {
			// A moved state that did not record the namespace: the same
			// object, in the namespace its kind's scope gives it.
			prevID.Namespace = namespace.ValueString()
		}
		if identityChanged(prevID, p.id, namespace) {
			// Terraform plans the replacement again as a create.
			p.resp.RequiresReplace = append(p.resp.RequiresReplace, replacedFor(p.at))
			diags.AddWarning("The object will be replaced", replacementWarning(prevID, p.id, "its identity changed"))
			return nil
		}
		r.warnLineDiff(p.state.YAMLBody.ValueString(), p.plan.YAMLBody.ValueString(), p.id, diags)
	}
	if c == nil || namespace.IsUnknown() {
		return nil // the cluster or the kind does not exist yet: known after apply
	}
	p.desired.SetNamespace(namespace.ValueString())
	p.id.Namespace = namespace.ValueString()
	return c
}

// planUpdate plans the object in state: read it (or take the copy the
// refresh handed on), check it is still this resource's, and plan it as
// package objectplan plans an object, then say what the apply will change.
func (r *Resource) planUpdate(ctx context.Context, c *connection.Client, p *planning) {
	diags := &p.resp.Diagnostics
	recent, err := recallOrGet(ctx, c, p.id)
	live := recent.Obj
	switch {
	case connection.Gone(err, p.id.Name):
		live = nil
	case meta.IsNoMatchError(err):
		return // a CRD created in this run: known after apply
	case err != nil:
		diags.AddError("Could not read the object at plan time",
			fmt.Sprintf("Reading %s: %v\n\n%s", p.id, err, connection.Remedy(err)))
		return
	}
	recordInState(c, p.id, p.state.ID.ValueString())
	if !p.stillOurs(live) {
		return
	}
	var handedOver []objectpath.Path
	if live != nil {
		handedOver = newlyIgnored(ctx, &p.state, p.plan)
		warnHandOver(live, handedOver, p.red, diags)
		keepHandedOver(p.desired, live, handedOver)
	}
	mv, moving := pendingMove(ctx, p.req.Private)
	o := objectplan.Object{Desired: p.desired, Live: live, Recent: recent, Marks: ownAnnotations, Ignore: p.ignore, Redactor: p.red,
		Last: &objectplan.Last{Private: p.req.Private, Stored: ownership.StateProjection(ctx, p.state.ManagedStateProjection),
			SameConfiguration: !moving && sameConfiguration(*p.plan, p.state)}}
	if r.handOnPlans {
		// Nothing is handed on otherwise, so there is no answer to reuse
		// either (a refresh's copy carries none): no body to compare.
		o.Body, _ = json.Marshal(p.desired.Object)
	}
	planned, err := objectplan.Plan(ctx, c, o)
	if err != nil {
		r.explainDryRunError(err, p.id, false, p.at, p.resp)
		return
	}
	if live != nil && planned.HandOn.Dry != nil {
		remember(c, live, recent.Seen, o.Body, planned.HandOn.Dry)
	}
	objectplan.Explain(ctx, o, planned, objectplan.Explanation{Subject: p.id.String(), At: pathProjection,
		Attribute: "managed_state_projection", Private: privatestate.Plan{Req: p.req, Resp: p.resp}, Verbosity: r.verbosity}, diags)
	diags.Append(into(ctx, planned.Observation, p.plan)...)
	p.plan.FieldOwnership = r.plannedOwnership(ctx, p, live, planned, moving || len(handedOver) > 0)
	if moving && live != nil {
		diags.AddWarning("Taking over an object moved from another provider", moveWarning(p.id, live, mv))
	}
	if !moving && onlyConnectionChanged(ctx, *p.plan, p.state) {
		diags.AddWarning("Only the connection changed",
			fmt.Sprintf("Only cluster_connection changed for %s (a rotated token or certificate, say). The update "+
				"sends nothing to the cluster. It is planned because this resource's own configuration holds the "+
				"credential, which its state keeps too. Give the credential to the provider configuration's "+
				"cluster_connection (never kept in state), or name a kubeconfig_file or an exec plugin, and a "+
				"rotation plans nothing.", p.id))
	}
}

// stillOurs checks that the object in the cluster is the one this resource
// manages, and plans its create again when it was deleted outside.
func (p *planning) stillOurs(live *unstructured.Unstructured) bool {
	var foreign string
	if live != nil {
		foreign = notOurs(live, p.state.ID.ValueString(), p.state.UID.ValueString())
	}
	switch {
	case live == nil:
		// Deleted outside k8sconnect and not refreshed (a plain pulumi
		// up): the apply creates it again, under a new UID.
		p.plan.UID = types.StringUnknown()
	case foreign != "":
		p.resp.Diagnostics.AddAttributeError(p.at, "The object in the cluster is not this resource's",
			foreign+" Nothing will be changed. Refresh "+
				"(terraform apply -refresh-only, or pulumi refresh) to see it in state, then remove one of the "+
				"two declarations.")
		return false
	case p.state.UID.IsNull():
		p.plan.UID = types.StringValue(string(live.GetUID())) // state from before UIDs were recorded
	}
	return true
}

// plannedOwnership is field_ownership as planned. more: the apply does more
// than the request the dry run made (a move's takeover, a hand-over).
func (r *Resource) plannedOwnership(ctx context.Context, p *planning, live *unstructured.Unstructured,
	planned objectplan.Planned, more bool) types.Map {
	switch {
	case more || p.plan.UID.IsUnknown():
		// The apply is more than the request the dry run made: it takes
		// the fields of the provider the state moved from, hands newly
		// ignored fields to their other managers first, or creates the
		// object again. Its owners are known after it.
		return types.MapUnknown(types.ListType{ElemType: types.StringType})
	case !p.plan.ManagedStateProjection.Equal(p.state.ManagedStateProjection):
		// Owners as the dry run of this very apply gives them (into), so
		// the plan shows a change of values, not every owner "known after
		// apply"; Apply keeps what was planned (see applyAndRecord).
		return p.plan.FieldOwnership
	case !planned.Unchanged && r.liveDiffers(ctx, p.req, live, p.ignore, planned.Observation.Projection, p.red):
		// Nothing else differs from state, yet the apply must run.
		return types.MapUnknown(types.ListType{ElemType: types.StringType})
	}
	return p.state.FieldOwnership
}

// checkCreate is a create's plan: it checks, without storing anything, that
// the create will be accepted. One request answers both questions: a dry run
// of the create-only apply the create will send is validated as the create
// will be (schema, admission), or, with 409, says that the name is taken.
//
// The engine's re-plan during apply sends nothing: its plan made the same
// check with the same configuration moments before (providerdata.Phase), and
// the create-only apply that follows refuses a taken name by itself
// (docs/adr/0001-crash-safe-create.md). So a create costs three requests: this
// dry run and the create's two steps.
func (r *Resource) checkCreate(ctx context.Context, c *connection.Client, desired *unstructured.Unstructured,
	id manifest.Identity, at path.Path, resp *resource.ModifyPlanResponse) {
	if r.phase.Replanning() {
		return
	}
	probe := metadataCopy(desired)
	probe.SetResourceVersion(ssa.CreateOnlyVersion)
	_, err := ssa.Apply(ctx, c, probe, ssa.Options{FieldManager: ssa.FieldManager, DryRun: true})
	switch {
	case err == nil:
		return
	case !apierrors.IsConflict(err):
		r.explainDryRunError(err, id, true, at, resp)
		return
	}
	// Taken: look at what holds the name.
	recent, err := recallOrGet(ctx, c, id)
	live := recent.Obj
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return // deleted since, or a CRD created in this run: Create decides
	case err != nil:
		resp.Diagnostics.AddError("Could not read the object at plan time",
			fmt.Sprintf("Reading %s: %v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	owner := objectplan.HolderOf(live).Resource
	switch {
	case owner == "":
		// Certainly not ours. An object carrying a k8sconnect id may be ours
		// and about to be replaced (Terraform plans a replacement as a create
		// while the old object still exists); Create checks it again then.
		resp.Diagnostics.AddAttributeError(at, "Object already exists", adoptionError(live, id).Error())
	case createPending(live):
		// An unfinished create (ours, cut short, or another's in flight):
		// Create decides whether it may take it over. Check the
		// configuration against it as the takeover would apply it.
		if _, err := ssa.Apply(ctx, c, desired, ssa.Options{FieldManager: ssa.FieldManager, DryRun: true}); err != nil {
			r.explainDryRunError(err, id, true, at, resp)
		}
	case knownInState(c, id) == owner:
		// A replacement: the old object is still there until the apply
		// deletes it.
	case adoptable(live) && knownInState(c, id) == "":
		// Left by a run the user named as a killed apply of this
		// configuration: Create takes it over in place.
		resp.Diagnostics.AddAttributeWarning(at, "Taking over an object a killed apply left",
			fmt.Sprintf("%s was created by the run %s (%s), and no state holds it: this apply takes it over in place, "+
				"with the same UID. Nothing else is taken over.", id, live.GetAnnotations()[annotationCreatedByRun], AdoptRunEnv))
	default:
		// Another resource's finished object (in this state or another):
		// refused now, as Create would refuse it.
		resp.Diagnostics.AddAttributeError(at, "Object already exists", adoptionError(live, id).Error())
	}
}

// sameConfiguration reports whether the configuration that decides what is
// applied (the body and the fields ignored or hidden) is the one in state.
// A write-only body is never known to be the same: state does not hold it.
func sameConfiguration(plan, state model) bool {
	same := func(a, b attr.Value) bool { return !a.IsUnknown() && a.Equal(b) }
	return !plan.writeOnly() && same(plan.YAMLBody, state.YAMLBody) && same(plan.IgnoreFields, state.IgnoreFields) &&
		same(plan.SensitiveFields, state.SensitiveFields)
}

// onlyConnectionChanged reports an update in which nothing but the connection
// (cluster_connection, and the copy of it in resource_ref) differs from state:
// the same object, configuration and predicted fields. Update sends nothing
// for it.
func onlyConnectionChanged(ctx context.Context, plan, state model) bool {
	same := func(a, b attr.Value) bool { return !a.IsUnknown() && a.Equal(b) }
	// field_ownership may be unknown: a refresh skipped for refused stored
	// credentials leaves it to be read at apply (readOwnership).
	if !sameConfiguration(plan, state) || !same(plan.ManagedStateProjection, state.ManagedStateProjection) ||
		(!plan.FieldOwnership.IsUnknown() && !plan.FieldOwnership.Equal(state.FieldOwnership)) || !same(plan.DeleteTimeout, state.DeleteTimeout) ||
		!same(plan.DeleteProtection, state.DeleteProtection) || !same(plan.ForceDestroy, state.ForceDestroy) ||
		!same(plan.UID, state.UID) || !same(plan.ClusterUID, state.ClusterUID) || !same(plan.ID, state.ID) {
		return false
	}
	if plan.ClusterConnection.Equal(state.ClusterConnection) || plan.ResourceRef.IsUnknown() {
		return false
	}
	p, d1 := resourceref.FromObject(ctx, plan.ResourceRef)
	s, d2 := resourceref.FromObject(ctx, state.ResourceRef)
	return !d1.HasError() && !d2.HasError() && p.Identity() == s.Identity()
}

// plannedNamespace is where the object will live: the manifest's namespace, or
// "default" for a namespaced kind, "" for a cluster-scoped one, and unknown
// while the kind or the cluster cannot be looked up yet.
func plannedNamespace(c *connection.Client, obj *unstructured.Unstructured) types.String {
	if ns := obj.GetNamespace(); ns != "" {
		return types.StringValue(ns)
	}
	if c == nil {
		return types.StringUnknown()
	}
	mapping, err := c.Mapping(obj.GroupVersionKind())
	if err != nil {
		return types.StringUnknown()
	}
	return types.StringValue(scope.Namespace(mapping, ""))
}

// identityChanged reports a change that names another object. A new version
// of the same group and kind is not one: the server stores one object and
// serves it under each version, so it is updated in place.
func identityChanged(prev, next manifest.Identity, namespace types.String) bool {
	if prev.GVK().Group != next.GVK().Group || prev.Kind != next.Kind || prev.Name != next.Name {
		return true
	}
	return !namespace.IsUnknown() && prev.Namespace != namespace.ValueString()
}

// adoptionError says why a create must not take over an existing object: it
// belongs to someone else, or to another k8sconnect resource.
func adoptionError(live *unstructured.Unstructured, id manifest.Identity) error {
	owner := objectplan.HolderOf(live).Resource
	if left := leftByRun(live); owner != "" && left != "" {
		return fmt.Errorf("%s already exists and carries the id %s of another k8sconnect resource (annotation %s), "+
			"whose create finished. %s", id, owner, annotationOwnedBy, left)
	}
	if owner != "" {
		return fmt.Errorf("%[1]s already exists and carries the id %[2]s of another k8sconnect resource (annotation %[3]s), "+
			"whose create finished. If two resources declare this object, remove one of them or move it in state "+
			"(terraform state mv / pulumi state move). If it was left by an apply of this resource that failed while "+
			"confirming the create, take it over with: terraform import <address> %[4]s (or: pulumi import "+
			"k8sconnect:index/kubernetesObject:KubernetesObject <name> %[4]s)",
			id, owner, annotationOwnedBy, ImportID(id))
	}
	if set := objectplan.HolderOf(live).ApplySet; set != "" {
		return fmt.Errorf("%s already exists and is a member of %s. An object belongs to one resource: take it "+
			"out of this configuration or out of the set", id, objectplan.HolderOf(live))
	}
	return fmt.Errorf("%s already exists in the cluster and k8sconnect does not manage it. Delete it, or choose "+
		"another name. To change a few fields of an object someone else manages, use k8sconnect_patch", id)
}

// explainDryRunError turns a dry-run rejection into a plan-time diagnostic.
func (r *Resource) explainDryRunError(err error, id manifest.Identity, creating bool, at path.Path, resp *resource.ModifyPlanResponse) {
	if waitsForOrdering(err, id.Namespace) {
		return // a CRD or namespace created in this run: checked again at apply
	}
	if connection.IsNetworkFailure(err) {
		resp.Diagnostics.AddAttributeError(at, connection.NoAnswer,
			fmt.Sprintf("The plan's server-side dry run of %s got no answer, so nothing was applied and nothing was "+
				"decided about the object:\n\n%v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	if field, ok := immutableField(err); ok && !creating {
		resp.RequiresReplace = append(resp.RequiresReplace, replacedFor(at))
		resp.Diagnostics.AddWarning("Immutable field changed: the object will be replaced",
			replacementWarning(id, id, fmt.Sprintf("the API server does not allow %s to change in place", field)))
		return
	}
	if field, ok := undeclaredField(err); ok {
		resp.Diagnostics.AddAttributeError(at, "Unknown field in "+at.String(),
			fmt.Sprintf("%s has an unknown field %q: %s (apiVersion %s) has no such field. Check its spelling, "+
				"its indentation and the apiVersion. Nothing was applied.", at, field, id.Kind, id.APIVersion))
		return
	}
	if field, want, ok := wrongType(err); ok {
		resp.Diagnostics.AddAttributeError(at, "Wrong type in "+at.String(),
			fmt.Sprintf("%s field %q must be a %s in %s (apiVersion %s). Check its value and its indentation. "+
				"Nothing was applied.\n\n%v", at, field, want, id.Kind, id.APIVersion, err))
		return
	}
	// After the recognisers above: Server-Side Apply answers a field the
	// schema lacks with a 500, which is a verdict on the object after all.
	if connection.Unreachable(err) {
		// Refused credentials, a server error, a throttle: the server said
		// nothing about the object, so this is no rejection of it.
		resp.Diagnostics.AddAttributeError(at, "The server-side dry run failed",
			fmt.Sprintf("The plan's server-side dry run of %s failed, so nothing was applied; the API server's "+
				"answer is no verdict on the object:\n\n%v\n\n%s", id, err, connection.Remedy(err)))
		return
	}
	resp.Diagnostics.AddAttributeError(at, "The API server rejected the object",
		fmt.Sprintf("A server-side dry run of %s failed, so nothing was applied:\n\n%v", id, err))
}

// Server-side apply reports a field missing from the kind's schema this way
// (strict field validation reports it as "unknown field").
var undeclared = regexp.MustCompile(`\.([^:\s]+): field not declared in schema|unknown field "([^"]+)"`)

func undeclaredField(err error) (string, bool) {
	m := undeclared.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	if m[1] != "" {
		return m[1], true
	}
	return m[2], true
}

// Server-side apply reports a value of the wrong type this way, e.g.
// ".data: expected map, got &{[a b]}".
var wrongTypeRE = regexp.MustCompile(`\.([^:\s]+): expected (\w+), got`)

func wrongType(err error) (field, want string, ok bool) {
	m := wrongTypeRE.FindStringSubmatch(err.Error())
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// immutableField finds the field an Invalid error calls immutable.
func immutableField(err error) (string, bool) {
	if !apierrors.IsInvalid(err) {
		return "", false
	}
	var status apierrors.APIStatus
	if se, ok := err.(apierrors.APIStatus); ok {
		status = se
	} else {
		return "", false
	}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if strings.Contains(c.Message, "immutable") {
				return c.Field, true
			}
		}
	}
	if strings.Contains(err.Error(), "immutable") {
		return "a field", true
	}
	return "", false
}

// replacedFor is the attribute a replacement is charged to. Terraform and
// OpenTofu replace only when the value at that path differs between state and
// plan: yaml_body_wo is null in both, so a replacement of an object given by
// it names managed_state_projection, which such a plan leaves unknown.
func replacedFor(at path.Path) path.Path {
	if at.Equal(pathYAMLBodyWO) {
		return pathProjection
	}
	return at
}

func idOrPlaceholder(id types.String) string {
	if id.IsUnknown() || id.IsNull() {
		return "planned"
	}
	return id.ValueString()
}

// liveDiffers reports whether the live values of our fields differ from what
// the apply will set (see ownership.LiveDiffers), or, when the refresh was
// skipped (stored credentials refused), whether who owns them changed.
func (r *Resource) liveDiffers(ctx context.Context, req resource.ModifyPlanRequest, live *unstructured.Unstructured,
	ignore []objectpath.Path, planned projection.Projection, red sensitive.Redactor) bool {
	if live == nil {
		return false
	}
	now, differs, err := ownership.LiveDiffers(ctx, req.Private, live, ssa.FieldManager, ownAnnotations, ignore, planned, red)
	if err != nil || differs {
		return differs
	}
	// When the refresh was skipped the state's field_ownership may be older
	// than the live object: then it is known only after apply.
	if !refreshSkipped(ctx, req.Private) {
		return false
	}
	var recorded map[string][]string
	if d := req.State.GetAttribute(ctx, path.Root("field_ownership"), &recorded); d.HasError() {
		return true
	}
	return !maps.EqualFunc(now.Ownership, recorded, slices.Equal[[]string])
}
