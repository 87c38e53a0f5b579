package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Create installs the release. When the install fails (a hook, the
// readiness wait, a rejected object), no state is kept: Terraform would
// taint it and the next apply would uninstall and install again, losing
// volumes and data. The release record, marked failed, stays in the cluster
// instead, and the next apply takes that release up again (records.checkInstall).
func (r *Resource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	withWriteOnly(ctx, &plan, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Create)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "")
	if ok, _ := r.apply(ctx, &plan, nil, private{}, false, nil, nil, resp.Private, &resp.Diagnostics); ok {
		plan.dropWriteOnly()
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

// Update upgrades the release. A failed upgrade keeps the state as it was,
// with status failed, so the next plan runs the upgrade again; one that
// atomic rolled back has the rollback's revision and status.
func (r *Resource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state model
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, d := optimeout.Start(ctx, plan.Timeouts, optimeout.Update)
	defer cancel()
	resp.Diagnostics.Append(d...)
	defer optimeout.Finish(ctx, &resp.Diagnostics, "")
	if !plan.Revision.IsUnknown() {
		// Nothing that is rendered or applied changed (delete_protection, a
		// timeout, the connection): no new revision.
		resp.Diagnostics.Append(savePlanned(ctx, resp.Private, nil)...)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	prior, err := loadPrivate(ctx, req.Private)
	if err != nil {
		resp.Diagnostics.AddError("Could not read private state", err.Error())
		return
	}
	adopt := adopting(ctx, req.Private)
	withWriteOnly(ctx, &plan, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var as *renderedAs
	if sameValues(plan, state) {
		// a repair: rendered as the last apply was, as planned
		as = lastRenderOf(lastRender(ctx, req.Private), &plan)
	}
	ok, after := r.apply(ctx, &plan, &state, prior, adopt, as, req.Private, resp.Private, &resp.Diagnostics)
	plan.dropWriteOnly()
	if ok {
		if adopt {
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateAdopting, nil)...)
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	state.Status = types.StringValue(string(common.StatusFailed))
	if after != nil && after.Info != nil {
		// atomic rolled the upgrade back: the state's objects are in the
		// cluster again, under the rollback's revision (deployed, unless
		// the rollback failed too), as a refresh would read it.
		state.Revision = types.Int64Value(int64(after.Version))
		state.Status = types.StringValue(after.Info.Status.String())
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// apply installs (for a Create, state nil) or upgrades the release in Helm's
// order and writes its record; it reports whether everything succeeded. As
// helm's upgrade, it prepares the revision (renders it, checks that it may
// be written, writes its pending record), performs it (CRDs, hooks, objects,
// deletions, readiness) and records how it went (the record deployed, the
// state).
//
// adopt is set for the first apply after an import: the objects are taken
// over from helm's field managers once applied.
//
// as, when set, is how templates see the release (.Release.Revision and
// .Release.IsUpgrade): the last apply's, for an apply whose values did not
// change, as the plan rendered it.
//
// in is the planned private state, which holds what the plan rendered (nil
// for a Create, which the engines give none): the apply renders what was
// planned or writes nothing (agrees).
func (r *Resource) apply(ctx context.Context, plan, state *model, prior private, adopt bool, as *renderedAs,
	in privatestate.Reader, out privatestate.Writer, diags *diag.Diagnostics) (ok bool, after *release.Release) {
	run := &applyRun{plan: plan, state: state, prior: prior, adopt: adopt, in: in}
	if in != nil {
		run.planned = loadPlanned(ctx, in)
	}
	diags.Append(savePlanned(ctx, out, nil)...) // the plan's, for this apply alone
	c, ok := r.clients.ClientFor(ctx, plan.ClusterConnection, diags)
	if !ok {
		return false, nil
	}
	run.c = c
	if !run.prepare(ctx, as, out, diags) {
		return false, nil
	}
	defer run.recs.hold(ctx, run.rec)()
	return run.perform(ctx, diags) && run.record(ctx, out, diags), run.after
}

// applyRun is one apply of the release: what prepare finds and makes, for
// perform and record.
type applyRun struct {
	c     *connection.Client
	plan  *model // completed as the run goes: the state it leaves
	state *model // nil for an install
	// prior are the objects the last apply made; for an adopted release,
	// those of its last record.
	prior   private
	adopt   bool
	timeout time.Duration
	recs    *records
	history []*release.Release
	rel     helmchart.Release // the revision written
	seen    helmchart.Release // the revision as templates saw it
	// repair: the inputs and the chart are as the last apply left them, so
	// this apply only puts the objects back, as that apply rendered them,
	// and runs no hook (renderRevision).
	repair bool
	rd     *rendered
	// crdClaims are the CRDs of crds/ that this apply creates or takes
	// over, by key.
	crdClaims map[string]*crdClaim
	// planned is what the plan rendered, nil when it kept nothing; in is
	// the planned private state.
	planned *plannedRender
	in      privatestate.Reader
	rec     *release.Release // the revision's record, pending until record
	applied map[string]*unstructured.Unstructured
	// adoptees are the objects take_ownership takes from others, by key,
	// each with the field managers that held it.
	adoptees map[string][]string
	// absent are the objects of an upgrade under atomic or cleanup_on_fail
	// that the cluster did not hold before it (noteAbsent), by key.
	absent map[string]bool
	// after is the record a failure left last, when it wrote one after
	// the failed revision's: the rollback's.
	after *release.Release
}

// prepare checks that the release may be installed or upgraded in this
// cluster, renders the revision and writes its pending record.
func (a *applyRun) prepare(ctx context.Context, as *renderedAs, out privatestate.Writer, diags *diag.Diagnostics) bool {
	c, plan := a.c, a.plan
	timeout, err := durations.Parse(plan.Timeout.ValueString())
	if err != nil {
		diags.AddError("Invalid timeout", err.Error())
		return false
	}
	a.timeout = timeout
	name, ns := plan.Name.ValueString(), plan.Namespace.ValueString()
	plan.ID = types.StringValue(releaseID(ns, name))
	// The plan recorded the identity it saw (state's, for an upgrade): the
	// apply must reach the same cluster.
	recorded := ""
	if !plan.ClusterUID.IsUnknown() {
		recorded = plan.ClusterUID.ValueString()
	}
	// The plan compared every identity recorded; the apply checks the one in
	// state, and keeps all it sees now for later plans (connection.Record).
	cluster, err := c.CheckCluster(ctx, connection.Recorded{Identity: recorded}, "release "+plan.ID.ValueString(), ns)
	if err != nil {
		diags.AddError("Cannot confirm which cluster this is", connection.Explain(err))
		return false
	}
	diags.Append(connection.Record(ctx, out, cluster)...)
	if plan.ClusterUID.IsUnknown() {
		plan.ClusterUID = types.StringValue(cluster.Identity)
	}
	recentReads.Forget(c, plan.ID.ValueString()) // what the plans read is about to change
	a.recs = newRecords(c, ns, int(plan.MaxHistory.ValueInt64()))
	if a.history, err = a.recs.history(name); err != nil {
		diags.AddError("Could not read the release records", connection.Explain(err))
		return false
	}
	// The plan's checks again, now that the apply is about to write: another
	// run may have installed or begun to change the release since.
	if a.state == nil {
		var adopt bool // upgrade_install found a release made elsewhere
		adopt, err = a.recs.checkInstall(name, a.history, a.plan.UpgradeInstall.ValueBool(), a.plan.Replace.ValueBool())
		a.adopt = a.adopt || adopt
	} else {
		err = a.recs.checkUpgrade(a.history)
	}
	if err != nil {
		diags.AddError("The release cannot be changed", err.Error())
		return false
	}
	a.rel = nextRevision(name, ns, a.history)
	version := ""
	if !plan.ChartVersion.IsUnknown() {
		version = plan.ChartVersion.ValueString()
	}
	var upgrade bool
	if a.rd, a.seen, upgrade = renderRevision(ctx, c, plan, a.rel, as, version, diags); a.rd == nil {
		return false
	}
	a.repair = !upgrade
	if len(a.history) > 0 {
		// What the latest record lists is the release's too (helm upgrade
		// from elsewhere may have added to it, an import has nothing else):
		// replaced by this apply, and deleted where the chart lacks it.
		more, err := unaccounted(ctx, c, a.history[len(a.history)-1], a.prior, ns, name)
		if err != nil {
			diags.AddError("Could not read the objects of the release's record", connection.Explain(err))
			return false
		}
		a.prior = mergedPrivate(a.prior, more)
	}
	ours := map[string]bool{}
	for key := range a.prior {
		ours[key] = true
	}
	planned := map[string]bool{}
	if !plan.Objects.IsUnknown() {
		for key := range plan.Objects.Elements() {
			planned[key] = true
		}
	}
	if a.crdClaims, err = claimCRDs(ctx, c, a.rd, ours, planned); err != nil {
		if held := (*crdHeldError)(nil); errors.As(err, &held) {
			diags.AddError("Object of the chart not accepted", err.Error())
		} else if errors.Is(err, errClaimLost) {
			diags.AddError(claimLostSummary, err.Error())
		} else {
			diags.AddError("Could not read a CRD of the chart", connection.Explain(err))
		}
		return false
	}
	if !a.agrees(ctx, diags) {
		return false
	}
	if err := a.noteAdoptees(ctx); err != nil {
		diags.AddError("Object of the chart not accepted", a.rd.values.Scrub(err.Error()))
		return false
	}
	if err := a.noteAbsent(ctx); err != nil {
		diags.AddError("Could not read the objects of the chart", connection.Explain(err))
		return false
	}
	if plan.CreateNamespace.ValueBool() {
		if err := ensureNamespace(ctx, c, ns); err != nil {
			diags.AddError("Namespace not created", connection.Explain(err))
			return false
		}
	}
	if err := a.recs.abandon(a.history); err != nil {
		diags.AddError("The release cannot be changed", err.Error())
		return false
	}
	a.rec, err = newRecord(a.rd, a.rel, a.history)
	if err == nil {
		err = a.recs.create(a.rec)
	}
	if err != nil {
		diags.AddError("Could not write the release record", connection.Explain(err))
		return false
	}
	return true
}

// agrees checks, before the apply writes anything, that it renders what its
// plan planned: the same chart (chart_digest), and the objects of the plan's
// objects and none other, an upgrade's each rendered as the plan rendered
// it or storing what was planned (differences). An install's objects are
// not compared one by one: the engines give a create no planned private
// state, and the plan an apply follows was made moments before.
func (a *applyRun) agrees(ctx context.Context, diags *diag.Diagnostics) bool {
	objects, digest := a.plan.Objects, a.plan.ChartDigest
	if objects.IsUnknown() || objects.IsNull() {
		return true // the plan rendered nothing to compare with
	}
	chartChanged := !digest.IsUnknown() && !digest.IsNull() && digest.ValueString() != a.rd.digest
	var bodies map[string]string
	if a.planned != nil {
		bodies = a.planned.Bodies
	}
	differ := differences(ctx, a.c, a.rd, objects, bodies, func(key string) *fieldpath.Set { return objectset.OwnedAtApply(ctx, a.in, key) })
	if !chartChanged && len(differ) == 0 {
		return true
	}
	diags.AddError("The apply would not do what the plan showed", a.rd.values.Scrub(disagreement(differ, chartChanged)))
	return false
}

// perform applies the revision in Helm's order: CRDs, pre hooks, objects,
// deletions of what left the chart, readiness, post hooks. The first
// failure stops it, marks the record failed and, under atomic or
// cleanup_on_fail, puts the cluster back (putBack).
func (a *applyRun) perform(ctx context.Context, diags *diag.Diagnostics) bool {
	summary, err := a.steps(ctx, diags)
	if err == nil {
		return true
	}
	a.fail(ctx, summary, err, diags)
	return false
}

// steps are perform's steps; the first that fails returns its summary and
// error.
func (a *applyRun) steps(ctx context.Context, diags *diag.Diagnostics) (string, error) {
	c, rd, timeout := a.c, a.rd, a.timeout
	if a.state != nil {
		// The fields ignore_fields newly lists keep their values.
		before, _ := objectset.IgnoreRulesOf(ctx, a.state.IgnoreFields, pathIgnoreFields, diags)
		after, _ := objectset.IgnoreRulesOf(ctx, a.plan.IgnoreFields, pathIgnoreFields, diags)
		if err := handOverIgnored(ctx, c, rd, before, after); err != nil {
			return "Ignored field not handed over", err
		}
	}
	a.applied = map[string]*unstructured.Unstructured{}
	for _, p := range rd.crds {
		var obj *unstructured.Unstructured
		var err error
		if t := a.crdClaims[p.key]; t != nil {
			obj, err = applyClaimed(ctx, c, p.obj.DeepCopy(), t)
		} else {
			obj, err = ssa.Apply(ctx, c, p.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
		}
		if errors.Is(err, errClaimLost) {
			return claimLostSummary, fmt.Errorf("%s: %w", p.key, err)
		}
		if err != nil {
			return "CRD not applied", fmt.Errorf("%s: %w", p.key, err)
		}
		if t := a.crdClaims[p.key]; t != nil && len(t.from) > 0 {
			if obj, err = ssa.TakeOver(ctx, c, obj, t.from); err != nil {
				return "CRD not taken over", fmt.Errorf("%s: handing over the fields of %v: %w", p.key, t.from, err)
			}
		}
		a.applied[p.key] = obj
		if err := objectset.WaitEstablished(ctx, c, obj, timeout); err != nil {
			return "CRD not established", fmt.Errorf("%s: %w", p.key, err)
		}
	}
	pre, post := release.HookPreInstall, release.HookPostInstall
	if a.rel.IsUpgrade {
		pre, post = release.HookPreUpgrade, release.HookPostUpgrade
	}
	if err := a.runHooks(ctx, pre); err != nil {
		return "Hook failed", err
	}
	if err := applyObjects(ctx, c, rd.objects, a.applied); err != nil {
		return "Object not applied", err
	}
	if a.adopt {
		if err := takeOverAll(ctx, c, a.applied); err != nil {
			return "Object not taken over", err
		}
	}
	if err := takeOwnership(ctx, c, a.adoptees, a.applied); err != nil {
		return "Object not taken over", err
	}
	if err := deleteRemoved(ctx, c, a.prior, rd, timeout); err != nil {
		return "Removed object not deleted", err
	}
	// atomic implies wait, as helm --atomic implies --wait: a rollback
	// after a release that never became ready is its point.
	if a.plan.Wait.ValueBool() || a.plan.Atomic.ValueBool() {
		if err := waitReady(ctx, c, rd.objects, a.applied, timeout, a.plan.WaitForJobs.ValueBool()); err != nil {
			return "Release not ready", err
		}
	}
	if err := a.runHooks(ctx, post); err != nil {
		return "Hook failed", err
	}
	return "", nil
}

// runHooks runs the hooks of event, unless the apply is a repair (hooks
// belong to an install or an upgrade, and a repair is neither) or
// disable_webhooks skips them.
func (a *applyRun) runHooks(ctx context.Context, event release.HookEvent) error {
	if a.repair || a.plan.DisableWebhooks.ValueBool() {
		return nil
	}
	return runHooks(ctx, a.c, hookRelease{a.rel.Name, a.rel.Namespace, a.history}, a.rd.hooks, event, a.timeout, a.rec)
}

// fail marks the record failed with err, puts the cluster back as atomic
// and cleanup_on_fail ask (putBack), and reports both under summary.
func (a *applyRun) fail(ctx context.Context, summary string, err error, diags *diag.Diagnostics) {
	// The record says what failed; the remedy, when the cluster's
	// answer (or its silence) was the failure, says what to do.
	detail := a.recs.fail(a.rec, err).Error()
	if remedy := connection.RequestRemedy(err); remedy != "" {
		detail += "\n\n" + remedy
	}
	if outcome, said := a.putBack(ctx); said != "" {
		summary += outcome
		detail += "\n\n" + said
	}
	diags.AddError(summary, a.scrub(ctx, detail))
}

// record marks the revision deployed and completes the plan into the state
// the apply leaves: each object's projection as applied, and its private
// state.
func (a *applyRun) record(ctx context.Context, out privatestate.Writer, diags *diag.Diagnostics) bool {
	plan, rd := a.plan, a.rd
	description := "Install complete"
	switch {
	case a.repair:
		// As helm rollback's "Rollback to N": what this revision holds was
		// rendered for revision N.
		description = fmt.Sprintf("Repair complete: objects put back as revision %d left them", a.seen.Revision)
	case plan.Description.ValueString() != "":
		description = plan.Description.ValueString()
	case a.rel.IsUpgrade:
		description = "Upgrade complete"
	}
	if err := a.recs.finish(a.rec, a.history, description); err != nil {
		diags.AddError("Could not write the release record", connection.Explain(err))
		return false
	}

	priv := private{}
	elems := map[string]attr.Value{}
	var planned map[string]attr.Value
	if !plan.Objects.IsUnknown() && !plan.Objects.IsNull() {
		planned = plan.Objects.Elements()
	}
	for _, p := range rd.all() {
		obs, err := observe(a.applied[p.key], nil, p)
		if err != nil {
			diags.AddError("Could not read an applied object", p.key+": "+connection.Explain(err))
			return false
		}
		value, stored := objectset.Applied(ctx, p.key, obs, planned[p.key])
		elems[p.key] = value
		priv[p.key] = newPrivateObject(p)
		diags.Append(ownership.Record(ctx, privatestate.Of{W: out, Object: p.key}, obs, stored)...)
	}
	for key := range a.prior {
		if _, still := priv[key]; !still {
			diags.Append(objectset.Forget(ctx, out, key)...)
		}
	}
	plan.Objects = types.MapValueMust(objectset.ProjectionType, elems)
	plan.Revision = types.Int64Value(int64(a.rel.Revision))
	plan.Status = types.StringValue(statusDeployed)
	plan.ChartVersion = types.StringValue(rd.chart.Version)
	plan.AppVersion = types.StringValue(rd.chart.Metadata.AppVersion)
	if plan.ChartDigest.IsUnknown() {
		plan.ChartDigest = types.StringValue(rd.digest)
	}
	plan.Notes = types.StringValue(rd.notes)
	diags.Append(priv.save(ctx, out)...)
	diags.Append(privatestate.Save(ctx, out, privateRenderedAs, renderedAs{Revision: a.seen.Revision, IsUpgrade: a.seen.IsUpgrade,
		ChartDigest: a.rd.digest, WriteOnly: plan.writeOnlyDigest()})...)
	diags.Append(privatestate.Save(ctx, out, privatePruned, rd.pruned)...)
	return !diags.HasError()
}

func ensureNamespace(ctx context.Context, c *connection.Client, name string) error {
	exists, err := c.NamespaceExists(ctx, name)
	if err != nil || exists {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name}}}
	_, err = ssa.Apply(ctx, c, ns, ssa.Options{FieldManager: ssa.FieldManager})
	return err
}

// applyObjects applies the objects kind by kind in Helm's install order
// (so a ServiceAccount exists before the Deployment that runs as it), each
// kind's objects in parallel.
func applyObjects(ctx context.Context, c *connection.Client, pieces []piece, applied map[string]*unstructured.Unstructured) error {
	var mu sync.Mutex
	return objectset.KindByKind(pieces, func(p piece) string { return p.obj.GetKind() }, func(p piece) error {
		obj, err := ssa.Apply(ctx, c, p.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
		if err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
		mu.Lock()
		applied[p.key] = obj
		mu.Unlock()
		return nil
	})
}

// waitReady waits until every object of pieces is ready by the one ready
// rule (objectset.WaitReady); with jobs (wait_for_jobs), a Job until it
// completes.
func waitReady(ctx context.Context, c *connection.Client, pieces []piece, applied map[string]*unstructured.Unstructured,
	timeout time.Duration, jobs bool) error {
	keys := make([]string, len(pieces))
	for i, p := range pieces {
		keys[i] = p.key
	}
	_, err := objectset.WaitReady(ctx, c, keys, applied, time.Now().Add(timeout), jobs)
	return err
}
