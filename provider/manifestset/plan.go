package manifestset

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/plugin/gcsettings"
	"github.com/k8sconnect/k8sconnect/provider/plugin/pulumiop"
)

// ModifyPlan plans the set: every object of the source is planned as
// k8sconnect_object plans its one (objectplan), and an object of the last
// apply that the source no longer gives leaves objects (pruned, or let go
// with prune = false).
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	defer gcsettings.Raise(gcsettings.SetLimit)() // the whole bundle is in memory at once
	if req.Plan.Raw.IsNull() {
		var state model
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.DeleteProtection.ValueBool() {
			resp.Diagnostics.AddError("The set is protected from deletion",
				fmt.Sprintf("delete_protection is set on set %s, so its objects will not be deleted. Set "+
					"delete_protection = false and apply first, then destroy it or remove it from the configuration.", state.ID.ValueString()))
		}
		return
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
	defer func() { resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...) }()
	plan.Objects = types.MapUnknown(objectset.ProjectionType)
	source := withWriteOnly(ctx, plan, req.Config, &resp.Diagnostics)
	var configured types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, pathApplySet, &configured)...)
	if !source.sourceKnown() || configured.IsUnknown() || resp.Diagnostics.HasError() {
		return // planned when the configuration is known
	}
	c, ok := objectplan.Client(ctx, r.clients, plan.ClusterConnection, &resp.Diagnostics)
	if !ok || c == nil {
		return
	}
	ms := readMembers(ctx, &source, c, &resp.Diagnostics)
	if ms == nil {
		return
	}
	var prior *model
	if !creating {
		prior = &state
	}
	p := parentOf(&plan, prior, ms)
	if err := checkParentKind(p); err != nil {
		resp.Diagnostics.AddAttributeError(pathApplySet, "Invalid ApplySet parent", err.Error())
		return
	}
	identity, ok := objectplan.Cluster(ctx, c, state.ClusterUID.ValueString(), req.Private, "set "+p.id(), namespaceOf(&plan), &resp.Diagnostics)
	if !ok {
		return
	}
	p, err := scoped(c, p)
	if err != nil {
		resp.Diagnostics.AddAttributeError(pathApplySet, "The set's ApplySet parent cannot be used", connection.Explain(err))
		return
	}
	if plan.ApplySet.IsUnknown() {
		plan.ApplySet = p.value()
	}
	plan.ID = types.StringValue(p.id())
	plan.ApplySetID = types.StringValue(p.applySetID())
	if creating {
		plan.ClusterUID = types.StringValue(identity)
		if err := usableParent(ctx, c, p); err != nil {
			resp.Diagnostics.AddError("The set's ApplySet parent cannot be used", connection.Explain(err))
			return
		}
	}
	ms = asMembersOf(ms, p)
	if tooling := loadAdopting(ctx, req.Private); tooling != "" {
		resp.Diagnostics.AddWarning("Taking over an imported set", adoptionWarning(p.id(), tooling))
	}
	r.warnSecretsInBody(&plan, &state, ms, &resp.Diagnostics)
	for _, pattern := range ms.unmatchedIgnores {
		resp.Diagnostics.AddAttributeWarning(pathIgnoreFields.AtMapKey(pattern), "ignore_fields key matches no object",
			fmt.Sprintf("%q matches no object of the set, so it leaves no field to other managers. Keys are "+
				"written as objects lists them, such as %s.", pattern, ms.all[0].key))
	}
	plan.Objects = r.planAll(ctx, c, ms, p, &plan, req, resp, state)
	r.warnLeaving(&plan, &state, ms, &resp.Diagnostics)
}

// asMembersOf makes ms the members of the set whose parent is p, as plan and
// apply send them: each with the set's part-of label, the redactor of the
// set (Secret data hashed with a key of the set's), and the hash of the body
// that results, which both compare with the last apply's.
func asMembersOf(ms *members, p parent) *members {
	markMembers(ms, p.applySetID())
	for i := range ms.all {
		ms.all[i].red = sensitive.New(p.id(), nil)
		ms.all[i].body = objectset.BodyHash(ms.all[i].obj, ms.all[i].red)
	}
	return ms
}

// warnSecretsInBody warns that a Secret given in yaml_body is kept in
// state, as k8sconnect_object warns of its own: with each plan that creates
// or changes yaml_body, never under Pulumi, whose bridge marks such a body
// secret by itself (docs/adr/0003-secrets-never-in-clear.md).
func (r *Resource) warnSecretsInBody(plan, state *model, ms *members, diags *diag.Diagnostics) {
	if plan.YAMLBody.IsNull() || r.plansRepeat || plan.YAMLBody.Equal(state.YAMLBody) {
		return
	}
	for _, mb := range ms.all {
		if sensitive.IsSecret(mb.obj.GetAPIVersion(), mb.obj.GetKind()) {
			// Not an attribute warning: the engine would print yaml_body's
			// source lines beside it, values and all.
			diags.AddWarning("A Secret in yaml_body is kept in state",
				fmt.Sprintf("%s is given by yaml_body, which Terraform and OpenTofu keep in state in clear, and "+
					"show in plans unless it is wrapped in sensitive(). objects shows its data as keyed hashes; "+
					"to keep it out of state too, read the set from files (path or kustomization). This warning "+
					"comes with each plan that creates or changes yaml_body.", mb.key))
			return
		}
	}
}

// warnLeaving names what happens to the objects of the last apply that
// the source no longer gives: a deletion shows in the plan's diff, letting
// go with prune = false does not.
func (r *Resource) warnLeaving(plan, state *model, ms *members, diags *diag.Diagnostics) {
	if state.Objects.IsNull() || plan.Prune.ValueBool() {
		return
	}
	now := ms.keys()
	for _, key := range slices.Sorted(maps.Keys(state.Objects.Elements())) {
		if !now[key] {
			diags.AddAttributeWarning(pathObjects.AtMapKey(key), "Object leaves the set and stays in the cluster",
				key+" is no longer in the source. With prune = false the apply leaves it in the cluster as it is, "+
					"without this set's applyset.kubernetes.io/part-of label, and no longer manages it.")
		}
	}
}

// planned is one object's plan.
type planned struct {
	value  attr.Value
	object objectplan.Object
	plan   objectplan.Planned
	// takenFrom names who holds an object take_ownership takes over.
	takenFrom string
}

// planAll plans every member in parallel and returns objects; an error of
// one is reported on its key.
func (r *Resource) planAll(ctx context.Context, c *connection.Client, ms *members, p parent, plan *model,
	req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, state model) types.Map {
	takeOwnership := plan.TakeOwnership.ValueBool()
	results := make([]planned, len(ms.all))
	errs := make([]error, len(ms.all))
	inState := state.Objects.Elements()
	priv := loadPrivate(ctx, req.Private)
	objectset.InParallel(len(ms.all), func(i int) {
		mb := ms.all[i]
		var last *objectplan.Last
		if v, ours := inState[mb.key]; ours {
			last = &objectplan.Last{Private: privatestate.Of{R: req.Private, Object: mb.key},
				Stored: ownership.StateProjection(ctx, objectset.MapOf(v)), SameConfiguration: priv[mb.key].Body == mb.body}
		}
		var handOn handon.Read
		results[i], handOn, errs[i] = planOne(ctx, c, mb, last, objectset.OwnedAtApply(ctx, req.Private, mb.key), ms, p, takeOwnership)
		if errs[i] == nil {
			recentReads.Remember(c, p.id(), mb.key, handOn)
		}
	})
	diags := &resp.Diagnostics
	elems := make(map[string]attr.Value, len(ms.all))
	for i, mb := range ms.all {
		if errs[i] != nil {
			objectset.ReportPlanError(diags, pathObjects.AtMapKey(mb.key), "set", mb.key, mb.obj, mb.red, errs[i])
			continue
		}
		elems[mb.key] = results[i].value
		if from := results[i].takenFrom; from != "" {
			diags.AddAttributeWarning(pathObjects.AtMapKey(mb.key), "Taking over an object",
				fmt.Sprintf("%s exists and belongs to %s. take_ownership is set: the apply makes it the set's, "+
					"applying it and handing the fields it sets from their field managers to the set.", mb.key, from))
		}
		if results[i].object.Desired == nil {
			continue // known after apply: nothing planned to explain
		}
		if _, ok := inState[mb.key]; ok && results[i].object.Live == nil {
			// Deleted outside, and a state no refresh brought up to date (a
			// plain pulumi up) still holds it: the apply creates it again,
			// which an element known only after it says.
			elems[mb.key] = types.MapUnknown(types.StringType)
		}
		if _, ok := inState[mb.key]; ok && priv[mb.key].NotReady && plan.Wait.ValueBool() {
			// Applied as planned, but the last apply's wait gave up on it:
			// a refresh finds nothing to change, and the wait is owed.
			elems[mb.key] = types.MapUnknown(types.StringType)
			diags.AddAttributeWarning(pathObjects.AtMapKey(mb.key), "Waiting again for an object that was not ready",
				mb.key+" was not ready when the last apply stopped waiting for it. This apply applies it again "+
					"(nothing changes if it is as planned) and waits for it again; set wait = false to stop waiting.")
		}
		if v, ok := inState[mb.key]; ok && v.Equal(results[i].value) && objectplan.Drifted(ctx, results[i].object, results[i].plan) {
			// A state no refresh brought up to date (a plain pulumi up)
			// plans no change for an object someone changed: the apply must
			// put it back all the same, which an element known only after
			// it says.
			elems[mb.key] = types.MapUnknown(types.StringType)
		}
		objectplan.Explain(ctx, results[i].object, results[i].plan, objectplan.Explanation{Subject: mb.key,
			At: pathObjects.AtMapKey(mb.key), Attribute: "objects",
			Private: privatestate.Of{R: req.Private, W: resp.Private, Object: mb.key}, Verbosity: r.verbosity,
			Options: []ownership.Option{ownership.LetGoBy("take them out of the manifests: [%s]")}}, diags)
	}
	if diags.HasError() {
		return types.MapUnknown(objectset.ProjectionType)
	}
	return types.MapValueMust(objectset.ProjectionType, elems)
}

// planOne plans one member: read (or taken from the last call of this
// process, recentReads), and refused when it exists and is not this set's
// (a create is exclusive), then planned by objectplan. A custom resource
// whose CRD comes with the set, and an object whose namespace does, are
// known after apply. It returns what this plan read or asked itself, for the
// next call (handon.Read's rule).
func planOne(ctx context.Context, c *connection.Client, mb member, last *objectplan.Last, owned *fieldpath.Set, ms *members,
	p parent, takeOwnership bool) (planned, handon.Read, error) {
	unknown := planned{value: types.MapUnknown(types.StringType)}
	if ms.definedKinds[mb.obj.GroupVersionKind().GroupKind().String()] && !c.Discovered(mb.obj.GroupVersionKind()) {
		return unknown, handon.Read{}, nil // its CRD comes with the set and is not served yet
	}
	id := manifest.IdentityOf(mb.obj)
	recent := recentReads.Recall(c, p.id(), mb.key)
	var handOn handon.Read
	// A dry run handed on that created the object (an answer without a
	// resourceVersion: nothing was there) says it was absent as surely as a
	// read, and the apply's create is exclusive all the same.
	absent := recent.Obj == nil && recent.Dry != nil && recent.Dry.GetResourceVersion() == ""
	if last == nil && recent.Obj == nil && !absent && pulumiop.ApplyFollows(ctx) {
		// Pulumi's update applies this plan at once and shows it to
		// nobody; its preview dry-ran the member. What must refuse before
		// anything is applied is an object that exists and is not the
		// set's, and a read of metadata tells whether it exists without
		// sending a body the size of a CRD: an absent member is known
		// after apply, and the apply's create is exclusive all the same.
		_, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		switch {
		case connection.Gone(err, id.Name), ms.comeWithTheSet(mb, err):
			return unknown, handOn, nil
		case meta.IsNoMatchError(err):
			return planned{}, handOn, notServed(mb)
		}
		// It exists, or the read failed: planned as any other plan does.
	}
	if last == nil && recent.Obj == nil && !absent {
		// A member the set has not made: one create-only dry run asks both
		// whether it exists and what its create would store, where a read
		// and a dry run take two requests. Only one that exists is read,
		// to name who holds it.
		dry, err := createOnlyDryRun(ctx, c, mb)
		switch {
		case err == nil:
			// Answered, so it is absent: the server refuses a create-only
			// apply of an object that exists. Its answer carries the
			// resourceVersion sent, which no stored object has.
			dry.SetResourceVersion("")
			recent = handon.Read{Seen: time.Now(), Sent: []byte(mb.body), Dry: dry}
			handOn, absent = recent, true
		case apierrors.IsConflict(err):
			// It exists: read below.
		case ms.comeWithTheSet(mb, err):
			return unknown, handOn, nil
		case meta.IsNoMatchError(err):
			return planned{}, handOn, notServed(mb)
		default:
			return planned{}, handOn, err
		}
	}
	if recent.Obj == nil && !absent {
		// Not handed on: read it now.
		read, err := objectplan.Read(ctx, c, id)
		switch {
		case ms.comeWithTheSet(mb, err):
			return unknown, handOn, nil
		case meta.IsNoMatchError(err):
			return planned{}, handOn, notServed(mb)
		case connection.Gone(err, id.Name), c.GoneWithItsKind(err, id.GVK()):
			read.Obj = nil
		case err != nil:
			return planned{}, handOn, fmt.Errorf("reading it: %w", err)
		}
		recent, handOn = read, read
	}
	var takeover string
	if recent.Obj != nil && last == nil {
		var err error
		if takeover, err = checkNotTaken(recent.Obj, p, takeOwnership); err != nil {
			return planned{}, handon.Read{}, err
		}
	}
	o := objectplan.Object{Desired: mb.obj.DeepCopy(), Body: []byte(mb.body), Live: recent.Obj, Recent: recent,
		Marks: setMarks, Ignore: mb.ignored, Owned: owned, Redactor: mb.red, Last: last}
	if recent.Obj == nil {
		o.Last = nil // deleted outside: created again
	}
	pl, err := objectplan.Plan(ctx, c, o)
	switch {
	case meta.IsNoMatchError(err), ms.comeWithTheSet(mb, err):
		return unknown, handOn, nil
	case err != nil:
		return planned{}, handon.Read{}, err
	}
	if pl.HandOn.Dry != nil {
		handOn = pl.HandOn
	}
	return planned{value: objectset.ProjectionValue(pl.Observation.Projection), object: o, plan: pl, takenFrom: takeover}, handOn, nil
}

// comeWithTheSet reports an error that says mb cannot be planned yet only
// because the set itself makes what it needs: its kind (a CRD of the set) or
// its namespace. Such a member is known after apply.
func (ms *members) comeWithTheSet(mb member, err error) bool {
	ns := mb.obj.GetNamespace()
	return meta.IsNoMatchError(err) && ms.definedKinds[mb.obj.GroupVersionKind().GroupKind().String()] ||
		connection.IsNamespaceNotFound(err, ns) && ms.namespaces[ns]
}

// createOnlyDryRun dry-runs the create of a member as the apply sends it: a
// create-only apply, which the server answers 409 Conflict when the object
// exists.
func createOnlyDryRun(ctx context.Context, c *connection.Client, mb member) (*unstructured.Unstructured, error) {
	obj := mb.obj.DeepCopy()
	obj.SetResourceVersion(ssa.CreateOnlyVersion)
	return ssa.Apply(ctx, c, obj, ssa.Options{FieldManager: ssa.FieldManager, DryRun: true})
}

// notServed is the error of a member whose kind the cluster does not serve
// and no CRD of the set defines.
func notServed(mb member) error {
	return fmt.Errorf("the cluster does not serve %s %s, and no CRD of the set defines it: install its CRD first, or "+
		"add it to the set", mb.obj.GetAPIVersion(), mb.obj.GetKind())
}

// checkNotTaken refuses an object the set would create that exists and is
// not this set's: it carries another set's part-of label, or none and
// takeOwnership is not set; with takeOwnership it returns who holds the
// object, which the apply takes it from. One that carries this set's label
// is its own, from an apply that did not finish.
func checkNotTaken(live *unstructured.Unstructured, p parent, takeOwnership bool) (string, error) {
	switch partOf := live.GetLabels()[labelPartOf]; {
	case partOf == p.applySetID():
		return "", nil
	case partOf != "":
		return "", fmt.Errorf("it already exists and belongs to another ApplySet (%s %s); nothing was changed. An "+
			"object belongs to one set: take it out of the manifests of one of them", labelPartOf, partOf)
	case takeOwnership:
		return holderName(live), nil
	}
	return "", fmt.Errorf("it already exists and belongs to %s; nothing was changed. Take it out of the manifests, "+
		"delete it first, or set take_ownership = true to make it the set's", holderName(live))
}

// holderName names who holds an object for the set's messages: its release
// or resource, or for one nobody claims, the clients that made it.
func holderName(live *unstructured.Unstructured) string {
	h := objectplan.HolderOf(live)
	if h.Unclaimed() {
		return "no set (made by " + h.MadeBy() + ")"
	}
	return h.String()
}
