package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/handon"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

// ModifyPlan renders the chart against the cluster and dry-runs every object
// of the release, so objects shows, per object, exactly what the apply will
// store in the fields k8sconnect owns.
func (r *Resource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		var state model
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if state.DeleteProtection.ValueBool() {
			resp.Diagnostics.AddError("The release is protected from deletion",
				fmt.Sprintf("delete_protection is set on release %s, so it will not be uninstalled. Set "+
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
	withWriteOnly(ctx, &plan, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	defer func() {
		plan.dropWriteOnly()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}()
	// Set again below once the plan has rendered: an apply compares only
	// with what this plan rendered.
	resp.Diagnostics.Append(savePlanned(ctx, resp.Private, nil)...)
	if !plan.Name.IsUnknown() && !plan.Namespace.IsUnknown() {
		plan.ID = types.StringValue(releaseID(plan.Namespace.ValueString(), plan.Name.ValueString()))
	}
	plan.unknownResults()
	if plan.Name.IsUnknown() || plan.Namespace.IsUnknown() || !plan.Inputs.Known() || !plan.writeOnlyKnown() {
		return // rendered when the configuration is known
	}
	c, ok := objectplan.Client(ctx, r.clients, plan.ClusterConnection, &resp.Diagnostics)
	if !ok || c == nil {
		return
	}
	identity, ok := objectplan.Cluster(ctx, c, state.ClusterUID.ValueString(), req.Private, "release "+plan.ID.ValueString(),
		plan.Namespace.ValueString(), &resp.Diagnostics)
	if !ok {
		return
	}
	if creating {
		plan.ClusterUID = types.StringValue(identity)
	} else {
		// A release installed before the identity was recorded gets it at
		// its next refresh, not as a change in every plan.
		plan.ClusterUID = state.ClusterUID
	}
	next := helmchart.Release{Name: plan.Name.ValueString(), Namespace: plan.Namespace.ValueString(),
		Revision: int(state.Revision.ValueInt64()) + 1, IsUpgrade: !creating}
	adopt, replacing := false, false // upgrade_install found a release made elsewhere; replace installs over one
	if creating {
		var ok bool
		if next, adopt, replacing, ok = checkInstallAtPlan(c, plan, &resp.Diagnostics); !ok {
			return
		}
	}
	if plan.Lint.ValueBool() && !lintChart(ctx, c, &plan, &resp.Diagnostics) {
		return
	}
	var last *renderedAs
	if !creating && sameValues(plan, state) {
		last = lastRenderOf(lastRender(ctx, req.Private), &plan)
	}
	rd, _, upgrade := renderRevision(ctx, c, &plan, next, last, "", &resp.Diagnostics)
	if rd == nil {
		return
	}
	warnPruned(rd.pruned, lastPruned(ctx, req.Private), &resp.Diagnostics)
	for _, pattern := range rd.unmatchedIgnores {
		example := "apps/Deployment/<namespace>/<name>"
		if all := rd.all(); len(all) > 0 {
			example = all[0].key
		}
		resp.Diagnostics.AddAttributeWarning(pathIgnoreFields.AtMapKey(pattern), "ignore_fields key matches no object",
			fmt.Sprintf("%q matches no object of the chart as rendered now, so it leaves no field to other managers. "+
				"Keys are those of objects (such as %s), where * matches any one part.", pattern, example))
	}
	plan.ChartVersion = types.StringValue(rd.chart.Version)
	plan.AppVersion = types.StringValue(rd.chart.Metadata.AppVersion)
	plan.ChartDigest = types.StringValue(rd.digest)
	if !creating && !upgrade && state.ChartDigest.IsNull() {
		// Applied by a version that did not record it: recorded at the next
		// upgrade, not as a change of its own.
		plan.ChartDigest = state.ChartDigest
	}

	if adopt && !replacing || !creating && adopting(ctx, req.Private) {
		resp.Diagnostics.AddWarning("Taking over a release made elsewhere", adoptionWarning(plan.ID.ValueString(), adopt))
	}
	objects, drifted := r.dryRunAll(ctx, c, rd, req, resp, state, plan, comingNamespace(ctx, c, plan))
	if resp.Diagnostics.HasError() {
		return
	}
	plan.Objects = objects
	// Notes that differ from the latest record's (one helm wrote from
	// elsewhere) are drift too: a repair writes them back.
	if !creating && !upgrade && !drifted && state.Status.ValueString() == statusDeployed && plan.Objects.Equal(state.Objects) &&
		sameInputs(plan, state) && rd.notes == state.Notes.ValueString() {
		plan.Revision, plan.Status, plan.Notes = state.Revision, state.Status, state.Notes
		return
	}
	plan.Status = types.StringValue(statusDeployed)
	if !creating { // a Create is given no planned private state
		planned := newPlannedRender(rd, objects)
		resp.Diagnostics.Append(savePlanned(ctx, resp.Private, &planned)...)
	}
}

// warnPruned warns of the fields disable_openapi_validation leaves out
// (pruned, by key) that the last apply did not (last): once, when they are
// news, not at every plan of a release that always leaves them out.
func warnPruned(pruned, last map[string][]string, diags *diag.Diagnostics) {
	for _, key := range slices.Sorted(maps.Keys(pruned)) {
		news := slices.DeleteFunc(slices.Clone(pruned[key]), func(f string) bool { return slices.Contains(last[key], f) })
		if len(news) == 0 {
			continue
		}
		diags.AddAttributeWarning(pathObjects.AtMapKey(key), "Fields the cluster does not know are left out",
			fmt.Sprintf("%s sets %s, which the cluster's schema of its kind does not declare; disable_openapi_validation "+
				"is set, so they are left out of what is applied, as the API server drops them for helm "+
				"--disable-openapi-validation. Once applied, this is not said again while the same fields are left out.",
				key, strings.Join(news, ", ")))
	}
}

// checkInstallAtPlan checks that the release may be installed
// (records.checkInstall) and returns the revision the install renders (a
// failed install taken up, a release adopted or installed over is the
// revision after its record, as the apply will render it), whether it adopts
// a release made elsewhere, whether it installs over one (replace, warned
// of), and false when the install is refused.
func checkInstallAtPlan(c *connection.Client, plan model, diags *diag.Diagnostics) (next helmchart.Release, adopt, replacing, ok bool) {
	name, ns := plan.Name.ValueString(), plan.Namespace.ValueString()
	records := newRecords(c, ns, 0)
	history, err := records.history(name)
	if err == nil {
		adopt, err = records.checkInstall(name, history, plan.UpgradeInstall.ValueBool(), plan.Replace.ValueBool())
	}
	if err != nil {
		diags.AddError("The release cannot be installed", connection.Explain(err))
		return next, false, false, false
	}
	if plan.Replace.ValueBool() && replaceable(history) && history[len(history)-1].Labels[labelWriter] != "k8sconnect" {
		last := history[len(history)-1]
		diags.AddWarning("Installing over a release", fmt.Sprintf("Release %s has revision %d, %s, as its "+
			"latest. replace is set, so this install writes revision %d over it, as helm install --replace does; "+
			"objects of its record that the chart no longer renders are deleted, and those that exist are updated "+
			"in place.", plan.ID.ValueString(), last.Version, last.Info.Status, last.Version+1))
		replacing = true
	}
	return nextRevision(name, ns, history), adopt, replacing, true
}

func (m *model) unknownResults() {
	m.Objects = types.MapUnknown(objectset.ProjectionType)
	m.Revision = types.Int64Unknown()
	m.Status = types.StringUnknown()
	m.ChartVersion = types.StringUnknown()
	m.ChartDigest = types.StringUnknown()
	m.AppVersion = types.StringUnknown()
	m.Notes = types.StringUnknown()
}

// planned is one object's plan: its value in objects and, when it was
// dry-run or found unchanged, what objectplan planned (what Explain explains).
type planned struct {
	value  attr.Value
	object objectplan.Object
	plan   objectplan.Planned
	// takeover is set for a CRD of crds/ that exists and that the apply
	// takes over (claimCRD).
	takeover *crdClaim
	// leftTo is set for a CRD of crds/ that another release holds: not in
	// objects.
	leftTo *crdOfAnotherRelease
	// adoptedFrom names who holds an object that exists already and that
	// take_ownership makes the release's.
	adoptedFrom string
}

// comingNamespace is the namespace the apply makes (create_namespace), or
// "". It is asked for once, so that no dry run waits for the server to give
// up on a namespace the apply is to make (connection.NamespaceMissing); an
// account that may not read namespaces dry-runs as before.
func comingNamespace(ctx context.Context, c *connection.Client, plan model) string {
	if !plan.CreateNamespace.ValueBool() {
		return ""
	}
	_, _ = c.NamespaceExists(ctx, plan.Namespace.ValueString())
	return plan.Namespace.ValueString()
}

// dryRunAll dry-runs every object of release id and projects the answers,
// and hands what it read and dry-ran on to the next plan of the release in
// this process (recentReads).
// An object whose kind comes with the release (a CRD installed by this very
// apply) or whose namespace the apply makes (comingNamespace, under
// create_namespace; "" otherwise) is known after apply. An object in any
// other namespace the cluster lacks is refused at plan.
// It reports whether a live object drifted from what its plan stores
// (objectplan.Drifted), which the apply must repair even when objects plans
// no change. The ownership of every object of the last apply is then explained as
// k8sconnect_object explains its one (ADR 0008), each with its own private
// state.
func (r *Resource) dryRunAll(ctx context.Context, c *connection.Client, rd *rendered, req resource.ModifyPlanRequest,
	resp *resource.ModifyPlanResponse, state, plan model, comingNamespace string) (types.Map, bool) {
	id, takeOwnership := plan.ID.ValueString(), plan.TakeOwnership.ValueBool()
	pieces := rd.all()
	results := make([]planned, len(pieces))
	errs := make([]error, len(pieces))
	inState := state.Objects.Elements()
	priv, err := loadPrivate(ctx, req.Private)
	if err != nil {
		priv = private{} // every object is dry-run
	}
	objs := make([]*unstructured.Unstructured, len(pieces))
	for i, p := range pieces {
		objs[i] = p.obj
	}
	defined := objectset.DefinedKinds(objs)
	objectset.InParallel(len(pieces), func(i int) {
		p := pieces[i]
		if gvk := p.obj.GroupVersionKind(); defined[gvk.GroupKind()] && !c.Discovered(gvk) {
			// Its CRD comes with the release and is not served yet: known
			// after apply, without asking discovery again for each kind.
			results[i] = planned{value: types.MapUnknown(types.StringType)}
			return
		}
		recent := recentReads.Recall(c, id, p.key)
		var last *lastApply
		if v, ours := inState[p.key]; ours {
			last = &lastApply{private: privatestate.Of{R: req.Private, Object: p.key}, stored: ownership.StateProjection(ctx, objectset.MapOf(v)),
				body: priv[p.key].Body, live: recent.Obj}
		}
		var handOn handon.Read
		results[i], handOn, errs[i] = dryRunOne(ctx, c, p, last, recent, comingNamespace, takeOwnership)
		if errs[i] == nil {
			recentReads.Remember(c, id, p.key, handOn)
		}
		if errs[i] == nil && rd.varies[p.key] {
			// Rendered otherwise at every render: known after apply.
			results[i] = planned{value: types.MapUnknown(types.StringType)}
		}
	})
	diags := &resp.Diagnostics
	installing := req.State.Raw.IsNull()
	elems := make(map[string]attr.Value, len(pieces))
	drifted := false
	for i, p := range pieces {
		if errs[i] != nil {
			objectset.ReportPlanError(diags, pathObjects.AtMapKey(p.key), "chart", p.key, p.obj, p.red, errs[i])
			continue
		}
		if other := results[i].leftTo; other != nil {
			if installing || other.respec {
				// Said once, and again whenever this chart's CRD is not
				// what the cluster has.
				diags.AddAttributeWarning(pathObjects.AtMapKey(p.key), "A CRD of the chart belongs to another release",
					other.warning(p.key))
			}
			continue
		}
		elems[p.key] = results[i].value
		drifted = drifted || objectplan.Drifted(ctx, results[i].object, results[i].plan)
		if t := results[i].takeover; t != nil {
			// Once: the apply puts it in objects, and the plans after it
			// find it the release's.
			diags.AddAttributeWarning(pathObjects.AtMapKey(p.key), "Taking over a CRD of the chart", t.warning(p.key))
		}
		if holder := results[i].adoptedFrom; holder != "" {
			diags.AddAttributeWarning(pathObjects.AtMapKey(p.key), "Taking ownership of an object", adoptedWarning(p.key, holder))
		}
		objectplan.Explain(ctx, results[i].object, results[i].plan, objectplan.Explanation{Subject: p.key,
			At: pathObjects.AtMapKey(p.key), Attribute: "objects", Private: privatestate.Of{R: req.Private, W: resp.Private, Object: p.key},
			Verbosity: r.verbosity, Options: []ownership.Option{ownership.LetGoBy("change the chart's values so that it no longer sets them: [%s]")}},
			diags)
	}
	if diags.HasError() {
		return types.MapUnknown(objectset.ProjectionType), false
	}
	return types.MapValueMust(objectset.ProjectionType, elems), drifted
}

// lastApply is what is known of an object the last apply made.
type lastApply struct {
	private privatestate.Reader        // its own private state (privatestate.Of)
	stored  projection.Projection      // its projection in state
	body    string                     // the hash of the body it was applied with
	live    *unstructured.Unstructured // as the refresh or the last plan just read it, if one did
}

// dryRunOne plans one object. An object the last apply made, rendered as
// then (same body) and untouched since (same values, same owners), is not
// dry-run: the apply would store what it stored then (ADR 0011), so a
// no-change plan of a chart asks nothing but the refresh's reads, and an
// upgrade dry-runs only the objects whose rendering it changes. That holds
// whatever else changed: the body is the whole rendered object, so a chart
// that writes the new revision into an object renders it otherwise and is
// dry-run. An object new to the release is read for its owner only when its
// dry run shows it exists already. recent is what the last call of this
// process handed on of the object; dryRunOne returns what this plan read or
// asked itself, for the next (handon.Read's rule).
func dryRunOne(ctx context.Context, c *connection.Client, p piece, last *lastApply, recent handon.Read,
	comingNamespace string, takeOwnership bool) (planned, handon.Read, error) {
	var handOn handon.Read
	o := objectplan.Object{Desired: p.obj.DeepCopy(), Body: []byte(objectset.BodyHash(p.obj, p.red)), Recent: recent, Marks: helmMarks,
		Ignore: p.ignored, Redactor: p.red}
	if last != nil {
		o.Live = last.live
		if o.Live == nil {
			id := manifest.IdentityOf(p.obj)
			read, err := objectplan.Read(ctx, c, id)
			switch {
			case connection.Gone(err, id.Name), c.GoneWithItsKind(err, id.GVK()):
				read.Obj = nil // deleted outside (or its CRD was): created again
			case err != nil:
				return planned{}, handon.Read{}, fmt.Errorf("reading it: %w", err)
			}
			// A copy of its own: the last call's answer does not hold for it.
			o.Live, o.Recent, handOn = read.Obj, read, read
		}
		o.Owned, _ = privatestate.LoadFieldSet(ctx, last.private, privatestate.OwnedFields)
		o.Last = &objectplan.Last{Private: last.private, Stored: last.stored,
			SameConfiguration: last.body != "" && last.body == string(o.Body)}
	}
	pl, err := objectplan.Plan(ctx, c, o)
	switch {
	case meta.IsNoMatchError(err):
		return planned{value: types.MapUnknown(types.StringType)}, handOn, nil // its CRD comes with the release
	case connection.IsNamespaceNotFound(err, comingNamespace):
		return planned{value: types.MapUnknown(types.StringType)}, handOn, nil // its namespace comes with the apply
	case err != nil:
		return planned{}, handon.Read{}, err
	}
	if pl.HandOn.Dry != nil {
		handOn = pl.HandOn
	}
	out := planned{value: objectset.ProjectionValue(pl.Observation.Projection), object: o, plan: pl}
	if !pl.Unchanged && last == nil && existedBefore(pl.Dry) {
		var err error
		if p.fromCRDsDir {
			out.takeover, err = checkCRDClaim(ctx, c, p, pl.Dry)
			if errors.As(err, &out.leftTo) {
				return planned{leftTo: out.leftTo}, handOn, nil
			}
		} else if takeOwnership {
			out.adoptedFrom, _, err = adoptable(ctx, c, p)
		} else {
			err = checkNotTaken(ctx, c, p)
		}
		if err != nil {
			return planned{}, handon.Read{}, err
		}
	}
	return out, handOn, nil
}

// existedBefore tells from a dry run's answer whether the object was there
// before: the server gives a dry-run create no resourceVersion, as it
// stores nothing.
func existedBefore(dry *unstructured.Unstructured) bool {
	return dry.GetResourceVersion() != ""
}

// adoptedWarning tells what the apply does to an object take_ownership
// takes from holder.
func adoptedWarning(key, holder string) string {
	return fmt.Sprintf("%s exists already and belongs to %s. take_ownership is set, so this apply makes it this "+
		"release's, as helm --take-ownership does: it is updated in place (it keeps its UID), gets the chart's fields "+
		"and this release's marks, and the fields the chart sets are handed to k8sconnect from the field managers "+
		"that held them; fields only they set stay theirs. A Helm release that listed it still does in its record, "+
		"and its uninstall would delete it.", key, holder)
}

// checkNotTaken refuses an object the release would take from someone else.
func checkNotTaken(ctx context.Context, c *connection.Client, p piece) error {
	owner, err := takenBy(ctx, c, p)
	if err != nil || owner == "" {
		return err
	}
	return fmt.Errorf("it already exists and belongs to %s; nothing was changed. Remove it from the chart (or "+
		"from the other owner), or delete it first if it is meant to be this release's", owner)
}

// checkCRDClaim reads a CRD of crds/ that exists and that the release does
// not hold yet, and tells whether the apply, which dry answers for, may take
// it over (claimCRD).
func checkCRDClaim(ctx context.Context, c *connection.Client, p piece, dry *unstructured.Unstructured) (*crdClaim, error) {
	read, err := objectplan.Read(ctx, c, manifest.IdentityOf(p.obj))
	switch {
	case connection.Gone(err, p.obj.GetName()):
		return nil, nil // deleted since the dry run: created
	case err != nil:
		return nil, fmt.Errorf("reading it: %w", err)
	}
	return claimCRD(c, p, read.Obj, dry)
}
