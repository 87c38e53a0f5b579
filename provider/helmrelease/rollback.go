package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// What a failed install or upgrade leaves behind when atomic or
// cleanup_on_fail asks for the cluster back, as helm's --atomic (Helm 4's
// --rollback-on-failure) and --cleanup-on-fail do it, once
// the failed revision's record is marked failed (putBack). An upgrade is rolled back
// as helm rollback would roll it back to the last deployed revision; an
// install is uninstalled as helm uninstall would uninstall it; under
// cleanup_on_fail the objects the upgrade created go. The run fails all the
// same, and keeps no state an install did not have, so nothing is tainted.

// noteAbsent finds, for an upgrade under atomic or cleanup_on_fail, the
// objects of the revision that the previous one lacks and that the cluster
// does not hold yet: those the run will create, which a failure deletes
// (createdObjects). It reads before the run writes anything.
func (a *applyRun) noteAbsent(ctx context.Context) error {
	if !a.rel.IsUpgrade || !a.plan.Atomic.ValueBool() && !a.plan.CleanupOnFail.ValueBool() {
		return nil
	}
	var fresh []piece
	for _, p := range a.rd.objects {
		if _, before := a.prior[p.key]; !before {
			fresh = append(fresh, p)
		}
	}
	absent := make([]bool, len(fresh))
	errs := make([]error, len(fresh))
	objectset.InParallel(len(fresh), func(i int) {
		id := manifest.IdentityOf(fresh[i].obj)
		_, err := a.c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		switch {
		case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
			absent[i] = true
		case err != nil:
			errs[i] = fmt.Errorf("%s: %w", fresh[i].key, err)
		}
	})
	a.absent = map[string]bool{}
	for i, p := range fresh {
		if absent[i] {
			a.absent[p.key] = true
		}
	}
	return errors.Join(errs...)
}

// createdObjects are the objects this run created (noteAbsent), each bound
// to the UID it was created with: CRDs aside, which are never deleted for
// a failure, since every object of their kind would go with them.
func (a *applyRun) createdObjects() []boundObject {
	var out []boundObject
	for key := range a.absent {
		if obj := a.applied[key]; obj != nil {
			out = append(out, boundObject{key: key, id: manifest.IdentityOf(obj), uid: string(obj.GetUID())})
		}
	}
	return out
}

// putBack puts the cluster back after the failed run, as atomic and
// cleanup_on_fail ask: it returns what to add to the error's summary and a
// paragraph saying what it did or could not do ("" when neither is set).
func (a *applyRun) putBack(ctx context.Context) (outcome, said string) {
	atomic, cleanup := a.plan.Atomic.ValueBool(), a.plan.CleanupOnFail.ValueBool()
	var paragraphs []string
	if cleanup && a.rel.IsUpgrade {
		deleted, kept, err := a.deleteCreated(ctx, nil)
		outcome = "; the objects it created deleted"
		text := "cleanup_on_fail: " + deletedText(deleted, "this upgrade created no object, so none was deleted.",
			"deleted the objects this upgrade created: ")
		if err != nil {
			outcome = "; not cleaned up"
			text = fmt.Sprintf("cleanup_on_fail: not every object this upgrade created could be deleted: %s", connection.Explain(err))
		}
		paragraphs = append(paragraphs, text+keptText(kept)+" The revision stays failed; the next apply runs the upgrade again.")
	}
	switch {
	case !atomic:
	case a.rel.IsUpgrade:
		rb, err := a.rollBack(ctx)
		outcome, said = rb.report(a, err)
		paragraphs = append(paragraphs, said)
	case a.state == nil && !a.adopt:
		kept, err := a.uninstall(ctx)
		outcome, said = a.uninstallReport(kept, err)
		paragraphs = append(paragraphs, said)
	default:
		// upgrade_install found a release another tool made and never
		// deployed: helm would not uninstall it either.
		outcome = "; not rolled back"
		paragraphs = append(paragraphs, fmt.Sprintf("atomic: not rolled back: release %s has no deployed revision "+
			"to roll back to, and this run did not install it, so it is not uninstalled either.", a.plan.ID.ValueString()))
	}
	return outcome, strings.Join(paragraphs, "\n\n")
}

// scrub hides the set_sensitive values of the configuration and of the
// state in text: a rollback applies the last deployed revision, which the
// state's values made.
func (a *applyRun) scrub(ctx context.Context, text string) string {
	text = a.rd.values.Scrub(text)
	if a.state != nil {
		var diags diag.Diagnostics
		text = a.state.ChartValues(ctx, &diags).Scrub(text)
	}
	return text
}

// deleteCreated deletes the objects this run created (createdObjects),
// except those of spare, in Helm's uninstall order: each only while it is
// still the object created (same UID) and the release's, keeping those
// marked helm.sh/resource-policy: keep.
func (a *applyRun) deleteCreated(ctx context.Context, spare map[string]bool) (deleted, kept []string, err error) {
	objs := slices.DeleteFunc(a.createdObjects(), func(o boundObject) bool { return spare[o.key] })
	return deleteReleaseObjects(ctx, a.c, objs, a.rel.Namespace, a.rel.Name, a.timeout)
}

// rollback is one rollback of a failed upgrade to target, the last
// deployed revision, written as revision rec.
type rollback struct {
	target, rec   *release.Release
	deleted, kept []string
	recorded      bool
}

// lastDeployed is the latest revision of history that was deployed (and
// may have been superseded since), nil when none was: the one helm's
// --atomic rolls back to.
func lastDeployed(history []*release.Release) *release.Release {
	for i := len(history) - 1; i >= 0; i-- {
		if st := history[i].Info; st != nil && (st.Status == common.StatusDeployed || st.Status == common.StatusSuperseded) {
			return history[i]
		}
	}
	return nil
}

// rollBack rolls the failed upgrade back as helm rollback would: a record
// of the next revision that holds the target's chart, values, manifest and
// hooks, pending while its pre-rollback hooks run, its objects are applied
// again as the target's record holds them, the objects the failed upgrade
// created are deleted and the objects become ready; then its post-rollback
// hooks, and it is deployed, the target superseded.
func (a *applyRun) rollBack(ctx context.Context) (*rollback, error) {
	rb := &rollback{target: lastDeployed(a.history)}
	if rb.target == nil {
		return rb, fmt.Errorf("release %s has no deployed revision to roll back to", a.plan.ID.ValueString())
	}
	crds, objects, err := recordedPieces(rb.target, a.c)
	if err != nil {
		return rb, fmt.Errorf("reading the manifest of revision %d: %w", rb.target.Version, err)
	}
	hooks, err := recordedHooks(rb.target, a.plan.ID.ValueString(), a.c)
	if err != nil {
		return rb, fmt.Errorf("reading the hooks of revision %d: %w", rb.target.Version, err)
	}
	rb.rec = rollbackRecord(rb.target, a.rec)
	if err := a.recs.create(rb.rec); err != nil {
		rb.rec = nil
		return rb, fmt.Errorf("writing the rollback's record: %w", err)
	}
	rb.recorded, a.after = true, rb.rec
	stop := a.recs.hold(ctx, rb.rec)
	err = a.rollBackObjects(ctx, rb, crds, objects, hooks)
	stop()
	if err != nil {
		rb.rec.SetStatus(common.StatusFailed, fmt.Sprintf("Rollback to %d failed: %v", rb.target.Version, err))
		if uerr := a.recs.update(rb.rec); uerr != nil {
			err = errors.Join(err, fmt.Errorf("the rollback's record could not be marked failed: %w", uerr))
		}
		return rb, err
	}
	if err := a.recs.finish(rb.rec, a.history, rb.rec.Info.Description); err != nil {
		return rb, fmt.Errorf("marking the rollback's record deployed: %w", err)
	}
	return rb, nil
}

// rollBackObjects does the rollback's work on the cluster, in helm
// rollback's order.
func (a *applyRun) rollBackObjects(ctx context.Context, rb *rollback, crds, objects []piece, hooks []hook) error {
	c, timeout := a.c, a.timeout
	owner := hookRelease{a.rel.Name, a.rel.Namespace, a.history}
	if a.plan.DisableWebhooks.ValueBool() {
		hooks = nil
	}
	if err := runHooks(ctx, c, owner, hooks, release.HookPreRollback, timeout, rb.rec); err != nil {
		return err
	}
	applied := map[string]*unstructured.Unstructured{}
	for _, p := range crds {
		obj, err := ssa.Apply(ctx, c, p.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
		if err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
		applied[p.key] = obj
		if err := objectset.WaitEstablished(ctx, c, obj, timeout); err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
	}
	if err := applyObjects(ctx, c, objects, applied); err != nil {
		return err
	}
	var err error
	if rb.deleted, rb.kept, err = a.deleteCreated(ctx, keysOf(crds, objects)); err != nil {
		return err
	}
	if err := waitReady(ctx, c, objects, applied, timeout, a.plan.WaitForJobs.ValueBool()); err != nil {
		return err
	}
	return runHooks(ctx, c, owner, hooks, release.HookPostRollback, timeout, rb.rec)
}

func keysOf(lists ...[]piece) map[string]bool {
	out := map[string]bool{}
	for _, l := range lists {
		for _, p := range l {
			out[p.key] = true
		}
	}
	return out
}

// rollbackRecord is the pending record of the rollback of failed to
// target, as helm rollback writes it: the next revision, with the target's
// chart, values, manifest, notes and hooks, described "Rollback to N".
func rollbackRecord(target, failed *release.Release) *release.Release {
	labels := maps.Clone(target.Labels)
	delete(labels, labelHeartbeat)
	hooks := make([]*release.Hook, 0, len(target.Hooks))
	for _, h := range target.Hooks {
		copied := *h
		copied.LastRun = release.HookExecution{}
		hooks = append(hooks, &copied)
	}
	info := &release.Info{LastDeployed: time.Now(), Status: common.StatusPendingRollback,
		RollbackRevision: target.Version, Description: fmt.Sprintf("Rollback to %d", target.Version)}
	if failed.Info != nil {
		info.FirstDeployed = failed.Info.FirstDeployed
	}
	if target.Info != nil {
		info.Notes = target.Info.Notes
	}
	return &release.Release{Name: target.Name, Namespace: target.Namespace, Version: failed.Version + 1,
		Chart: target.Chart, Config: target.Config, Manifest: target.Manifest, Hooks: hooks, Labels: labels, Info: info,
		// Client-side, as newRecord says why.
		ApplyMethod: string(release.ApplyMethodClientSideApply)}
}

// report is the rollback's outcome for the error of the run that failed:
// what to add to the summary and what to say.
func (rb *rollback) report(a *applyRun, err error) (outcome, said string) {
	failed := fmt.Sprintf("the upgrade (revision %d, marked failed)", a.rel.Revision)
	if err == nil {
		said = fmt.Sprintf("atomic: %s was rolled back to revision %d. Revision %d, which helm history shows as %q, "+
			"applied revision %d's objects again as its record holds them, and they are ready. ",
			failed, rb.target.Version, rb.rec.Version, rb.rec.Info.Description, rb.target.Version)
		said += deletedText(rb.deleted, "The upgrade had created no object.", "Deleted, as the upgrade created them: ")
		return fmt.Sprintf("; rolled back to revision %d", rb.target.Version), said + keptText(rb.kept) +
			" The configuration still asks for the upgrade: the next apply runs it again."
	}
	said = fmt.Sprintf("atomic: %s could not be rolled back", failed)
	if rb.target != nil {
		said += fmt.Sprintf(" to revision %d", rb.target.Version)
	}
	said += ": " + connection.Explain(err)
	switch {
	case rb.recorded:
		said += fmt.Sprintf(". Revision %d, the rollback, is marked failed, and the cluster may hold parts of "+
			"both revisions. The next apply runs the upgrade again; helm rollback %s %d -n %s tries the rollback again.",
			rb.rec.Version, a.rel.Name, rb.target.Version, a.rel.Namespace)
	default:
		said += ". Nothing was rolled back; the next apply runs the upgrade again."
	}
	return "; the rollback failed too", said
}

// uninstall uninstalls the release whose install failed, as helm
// uninstall would: its pre-delete hooks, its objects (those this run
// rendered and those an earlier failed install left) in uninstall order,
// its post-delete hooks, then every record. The CRDs of crds/ stay, and
// the objects marked helm.sh/resource-policy: keep, which it returns.
func (a *applyRun) uninstall(ctx context.Context) (kept []string, err error) {
	owner := hookRelease{a.rel.Name, a.rel.Namespace, a.history}
	var hooks []hook
	if !a.plan.DisableWebhooks.ValueBool() {
		hooks = a.rd.hooks
	}
	if err := runHooks(ctx, a.c, owner, hooks, release.HookPreDelete, a.timeout, nil); err != nil {
		return nil, err
	}
	all := private{}
	for _, p := range a.rd.all() {
		all[p.key] = newPrivateObject(p)
	}
	all = mergedPrivate(all, a.prior)
	var objs []boundObject
	for key, o := range all {
		if o.FromCRDsDir {
			continue
		}
		id, err := identityOf(key, o)
		if err != nil {
			return nil, err
		}
		objs = append(objs, boundObject{key: key, id: id})
	}
	if _, kept, err = deleteReleaseObjects(ctx, a.c, objs, a.rel.Namespace, a.rel.Name, a.timeout); err != nil {
		return kept, err
	}
	if err := runHooks(ctx, a.c, owner, hooks, release.HookPostDelete, a.timeout, nil); err != nil {
		return kept, err
	}
	return kept, a.recs.removeAll(a.rel.Name)
}

func (a *applyRun) uninstallReport(kept []string, err error) (outcome, said string) {
	if err != nil {
		return "; the install could not be undone", fmt.Sprintf("atomic: the install could not be undone: %s. Its "+
			"record (revision %d, failed) stays, so the next apply takes the release up again, as it takes up any "+
			"failed install.", connection.Explain(err), a.rel.Revision)
	}
	said = fmt.Sprintf("atomic: the install was undone as helm uninstall undoes one: its objects were deleted and "+
		"its records removed, so release %s is gone, and no state is kept. ", a.plan.ID.ValueString())
	for _, p := range a.rd.crds {
		if p.fromCRDsDir {
			said += "The CRDs of the chart's crds/ stay, as helm keeps them. "
			break
		}
	}
	return "; the install was undone", strings.TrimSpace(said+strings.TrimPrefix(keptText(kept), " ")) +
		" The next apply installs it again."
}

func deletedText(deleted []string, none, some string) string {
	if len(deleted) == 0 {
		return none
	}
	slices.Sort(deleted)
	return some + strings.Join(deleted, ", ") + "."
}

func keptText(kept []string) string {
	if len(kept) == 0 {
		return ""
	}
	slices.Sort(kept)
	return " Kept, as helm.sh/resource-policy: keep asks: " + strings.Join(kept, ", ") + "."
}

// recordedPieces are the objects a record's manifest holds, as an apply of
// them takes them: the CRDs its templates rendered, then the rest in
// Helm's install order, each in the release's namespace when it names none
// and with the release's ownership marks (helm writes its records
// without them).
func recordedPieces(rec *release.Release, c *connection.Client) (crds, objects []piece, err error) {
	scoped, err := recordedManifests(rec, c)
	if err != nil {
		return nil, nil, err
	}
	rel := helmchart.Release{Name: rec.Name, Namespace: rec.Namespace}
	id := releaseID(rec.Namespace, rec.Name)
	build := func(m map[string]string) ([]piece, error) {
		var out []piece
		for _, key := range slices.Sorted(maps.Keys(m)) {
			p, err := newPiece(id, key, m[key], nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			mark(p.obj, rel)
			out = append(out, p)
		}
		return out, nil
	}
	if crds, err = build(scoped.CRDs); err != nil {
		return nil, nil, err
	}
	cluster, err := build(scoped.ClusterScoped)
	if err != nil {
		return nil, nil, err
	}
	namespaced, err := build(scoped.Namespaced)
	if err != nil {
		return nil, nil, err
	}
	objects = slices.Concat(cluster, namespaced)
	sortInstallOrder(objects)
	return crds, objects, nil
}

// boundObject is an object to delete: key names it, and uid, when set, is
// the only object of that name that may go.
type boundObject struct {
	key string
	id  manifest.Identity
	uid string
}

// deleteReleaseObjects deletes objs in Helm's uninstall order and waits
// until they are gone: each only while it carries the marks of release
// namespace/name and, when bound to a UID, is that object. Those marked
// helm.sh/resource-policy: keep stay, and are returned in kept.
func deleteReleaseObjects(ctx context.Context, c *connection.Client, objs []boundObject, namespace, name string,
	timeout time.Duration) (deleted, kept []string, err error) {
	sortUninstallOrder(objs, func(o boundObject) string { return o.id.Kind })
	deadline := time.Now().Add(timeout)
	var mu sync.Mutex
	err = objectset.KindByKind(objs, func(o boundObject) string { return o.id.Kind }, func(o boundObject) error {
		live, err := c.GetMetadata(ctx, o.id.GVK(), o.id.Namespace, o.id.Name)
		switch {
		case apierrors.IsNotFound(err) || c.GoneWithItsKind(err, o.id.GVK()):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", o.key, err)
		case o.uid != "" && string(live.GetUID()) != o.uid, !objectplan.HolderOf(live).InRelease(namespace, name):
			return nil // another object of that name now, or another's
		case live.GetAnnotations()[annotationResourcePolicy] == "keep":
			mu.Lock()
			kept = append(kept, o.key)
			mu.Unlock()
			return nil
		}
		if err := objectset.DeleteAndWait(ctx, c, o.id, live, deadline); err != nil {
			return err
		}
		mu.Lock()
		deleted = append(deleted, o.key)
		mu.Unlock()
		return nil
	})
	return deleted, kept, err
}
