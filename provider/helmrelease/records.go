package helmrelease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

const statusDeployed = string(common.StatusDeployed)

// labelWriter marks the records k8sconnect writes, so an install can tell
// its own unfinished release (resumed) from one made with the helm CLI
// (which must be imported, not silently taken).
const labelWriter = "k8sconnect.io/written-by"

// labelHeartbeat is renewed on a pending record while the apply that wrote
// it works (records.hold): the lease that tells a running install or upgrade
// from one whose apply was killed.
const labelHeartbeat = "k8sconnect.io/heartbeat"

// records are a namespace's release records, in Helm's Secret storage
// format, through Helm's own storage driver.
type records struct {
	store   *storage.Storage
	secrets corev1client.SecretInterface
	err     error
}

func newRecords(c *connection.Client, namespace string, maxHistory int) *records {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return &records{err: err}
	}
	s := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace)))
	s.MaxHistory = maxHistory
	return &records{store: s, secrets: cs.CoreV1().Secrets(namespace)}
}

// recordLease is how long a pending record protects its release after the
// last sign of life of the apply that wrote it; that apply renews it four
// times per lease. The same lease, and the same override, as
// k8sconnect_object's unfinished creates (ADR 0001).
func recordLease() time.Duration { return durations.PendingLease(time.Minute) }

// pending reports a record of an install, upgrade or rollback in progress,
// and when it last showed a sign of life: written, updated, or renewed.
func pending(rel *release.Release) (bool, time.Time) {
	if rel.Info == nil || !rel.Info.Status.IsPending() {
		return false, time.Time{}
	}
	var last time.Time
	for _, l := range []string{"createdAt", "modifiedAt", labelHeartbeat} {
		if sec, err := strconv.ParseInt(rel.Labels[l], 10, 64); err == nil && time.Unix(sec, 0).After(last) {
			last = time.Unix(sec, 0)
		}
	}
	return true, last
}

// busyError refuses to work on a release another apply (or helm) is working
// on right now.
func busyError(rel *release.Release, since time.Time) error {
	by := "helm or another tool"
	if rel.Labels[labelWriter] == "k8sconnect" {
		by = "another k8sconnect apply"
	}
	return fmt.Errorf("release %s/%s is being changed by %s right now: its revision %d is %s, last renewed %s ago. "+
		"Two declarations of one release (twice in a configuration, or in two states or stacks) would overwrite "+
		"each other's objects, so nothing was changed. Keep one declaration of the release. If no other run is "+
		"working on it (its apply was killed), run again after %s: a record no one renews is taken up again",
		rel.Namespace, rel.Name, by, rel.Version, rel.Info.Status, time.Since(since).Round(time.Second),
		recordLease())
}

// hold renews rel's pending record until the returned stop is called, so
// that another apply finds it in use (checkInstall, checkUpgrade), and one that finds it
// unrenewed knows its apply is gone. The record is touched by a label alone,
// never rewritten, so the apply may go on changing rel meanwhile.
func (r *records) hold(ctx context.Context, rel *release.Release) (stop func()) {
	if r.err != nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	key := fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rel.Version)
	go func() {
		defer close(done)
		tick := time.NewTicker(recordLease() / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"%d"}}}`, labelHeartbeat, now.Unix())
				// A failed renewal is retried at the next tick. Renewals lost
				// for longer than the lease (an outage) make this apply look
				// killed: another run may then take the release up, and the
				// two race as two declarations would.
				_, _ = r.secrets.Patch(ctx, key, ktypes.MergePatchType, []byte(patch), metav1.PatchOptions{})
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// history is every revision of the release, oldest first; none when it was
// never installed.
func (r *records) history(name string) ([]*release.Release, error) {
	if r.err != nil {
		return nil, r.err
	}
	h, err := r.store.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the records of release %s: %w", name, err)
	}
	out := make([]*release.Release, 0, len(h))
	for _, x := range h {
		if rel, ok := x.(*release.Release); ok {
			out = append(out, rel)
		}
	}
	slices.SortFunc(out, func(a, b *release.Release) int { return a.Version - b.Version })
	return out, nil
}

// checkInstall refuses to install over a release, whose records are h, that
// k8sconnect did not write, or that another apply is working on now; one
// that k8sconnect wrote and did not finish (a failed wait, a killed apply
// whose record no one renews) is taken up again. With upgradeInstall
// (upgrade_install), a release another tool made is adopted instead, as an
// import would take it (adopt); one that k8sconnect wrote and finished is
// still refused, as another declaration's.
//
// With replace, a release whose latest revision is uninstalled (helm
// uninstall --keep-history) or failed is installed over, as `helm install
// --replace` does: the install writes the revision after it (replaceable).
func (r *records) checkInstall(name string, h []*release.Release, upgradeInstall, replace bool) (adopt bool, err error) {
	if len(h) == 0 {
		return false, nil
	}
	last := h[len(h)-1]
	if busy, since := pending(last); busy && time.Since(since) < recordLease() {
		return false, busyError(last, since)
	}
	ours := last.Labels[labelWriter] == "k8sconnect"
	if ours && last.Info != nil && last.Info.Status != common.StatusDeployed &&
		last.Info.Status != common.StatusSuperseded {
		return false, nil
	}
	if replace && replaceable(h) {
		// What another tool left of it is handed over as an adoption
		// hands it.
		return !ours, nil
	}
	if upgradeInstall && !ours {
		return true, r.checkUpgrade(h)
	}
	status := "unknown"
	if last.Info != nil {
		status = last.Info.Status.String()
	}
	remedy := "Import it into this resource instead (or set upgrade_install = true to take it over as it installs)"
	if replaceable(h) {
		remedy = "Set replace = true to install over it, as helm install --replace does, or import it into this resource"
	}
	if ours {
		remedy = "Import it into this resource instead (k8sconnect installed it, from another configuration or state)"
	}
	return false, fmt.Errorf("release %s/%s already exists in the cluster (revision %d, %s); k8sconnect will not install "+
		"over it. %s, or uninstall it first (helm uninstall %s -n %s)",
		last.Namespace, name, last.Version, status, remedy, name, last.Namespace)
}

// replaceable reports whether the latest revision of h is one that
// replace installs over: uninstalled (its history kept) or failed, as Helm
// 4.3.1's install lets --replace reuse the name.
func replaceable(h []*release.Release) bool {
	if len(h) == 0 {
		return false
	}
	last := h[len(h)-1]
	return last.Info != nil && (last.Info.Status == common.StatusUninstalled || last.Info.Status == common.StatusFailed)
}

// checkUpgrade refuses to upgrade a release another apply, or helm, is
// working on now. A pending record no one renews is left by a killed run:
// taken up again when k8sconnect wrote it; helm's own needs helm to settle it
// (helm rollback), as helm itself requires.
func (r *records) checkUpgrade(history []*release.Release) error {
	if len(history) == 0 {
		return nil
	}
	last := history[len(history)-1]
	busy, since := pending(last)
	switch {
	case !busy:
		return nil
	case time.Since(since) < recordLease():
		return busyError(last, since)
	case last.Labels[labelWriter] != "k8sconnect":
		return fmt.Errorf("release %s/%s has revision %d left %s by helm, which no run is finishing. helm refuses "+
			"to upgrade it until it is settled, and so does k8sconnect: run helm rollback %s -n %s (or helm "+
			"history to see it), then apply again", last.Namespace, last.Name, last.Version, last.Info.Status,
			last.Name, last.Namespace)
	}
	return nil
}

// abandon marks the pending records of history that no one renews failed,
// as what they are: the records of runs that stopped before finishing.
func (r *records) abandon(history []*release.Release) error {
	for _, rel := range history {
		if busy, since := pending(rel); busy && time.Since(since) >= recordLease() {
			rel.SetStatus(common.StatusFailed, "abandoned: the run that wrote this record stopped before finishing")
			if err := r.update(rel); err != nil {
				return fmt.Errorf("marking the abandoned revision %d failed: %w", rel.Version, err)
			}
		}
	}
	return nil
}

// create writes rel's pending record. Records are named by revision, so of
// two applies that race to write the same revision exactly one gets through.
func (r *records) create(rel *release.Release) error {
	if r.err != nil {
		return r.err
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[labelWriter] = "k8sconnect"
	err := r.store.Create(rel)
	if errors.Is(err, driver.ErrReleaseExists) {
		return fmt.Errorf("release %s/%s got a revision %d from another run while this one prepared it. Two "+
			"declarations of one release (twice in a configuration, or in two states or stacks) would overwrite "+
			"each other's objects, so nothing was changed. Keep one declaration of the release",
			rel.Namespace, rel.Name, rel.Version)
	}
	return err
}

func (r *records) update(rel *release.Release) error {
	if r.err != nil {
		return r.err
	}
	return r.store.Update(rel)
}

// finish marks rel deployed and every earlier deployed revision superseded,
// as helm does after a successful upgrade.
func (r *records) finish(rel *release.Release, earlier []*release.Release, description string) error {
	for i, e := range earlier {
		switch {
		case e.Info != nil && e.Info.Status == common.StatusDeployed:
			e.Info.Status = common.StatusSuperseded
		case i == len(earlier)-1 && e.Info != nil && e.Info.Status == common.StatusUninstalled:
			// Installed over (replace): superseded, as helm install
			// --replace leaves it.
			e.SetStatus(common.StatusSuperseded, "superseded by new release")
		default:
			continue
		}
		if err := r.update(e); err != nil {
			return err
		}
	}
	rel.Info.LastDeployed = time.Now()
	rel.SetStatus(common.StatusDeployed, description)
	return r.update(rel)
}

// fail marks rel failed with why, as helm records a failed install or
// upgrade; a failure to write it is joined to why.
func (r *records) fail(rel *release.Release, why error) error {
	rel.SetStatus(common.StatusFailed, why.Error())
	if err := r.update(rel); err != nil {
		return errors.Join(why, fmt.Errorf("the release record could not be marked failed: %w", err))
	}
	return why
}

// removeAll deletes every record of the release, as helm uninstall does.
func (r *records) removeAll(name string) error {
	h, err := r.history(name)
	if err != nil {
		return err
	}
	for _, rel := range h {
		if _, err := r.store.Delete(name, rel.Version); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return err
		}
	}
	return nil
}

// nextRevision is the revision that follows history, an upgrade once any
// revision was deployed.
func nextRevision(name, namespace string, history []*release.Release) helmchart.Release {
	rel := helmchart.Release{Name: name, Namespace: namespace, Revision: 1}
	for _, h := range history {
		rel.Revision = h.Version + 1
		if h.Info != nil && (h.Info.Status == common.StatusDeployed || h.Info.Status == common.StatusSuperseded) {
			rel.IsUpgrade = true
		}
	}
	return rel
}

// newRecord is the pending record of the revision rel is about to install.
func newRecord(rd *rendered, rel helmchart.Release, history []*release.Release) (*release.Release, error) {
	m, err := releaseManifest(rd.all())
	if err != nil {
		return nil, err
	}
	now := time.Now()
	info := &release.Info{FirstDeployed: now, LastDeployed: now, Status: common.StatusPendingInstall,
		Description: "Install in progress", Notes: rd.notes}
	if rel.IsUpgrade {
		info.Status, info.Description = common.StatusPendingUpgrade, "Upgrade in progress"
	}
	if len(history) > 0 && history[0].Info != nil {
		info.FirstDeployed = history[0].Info.FirstDeployed
	}
	out := &release.Release{Name: rel.Name, Namespace: rel.Namespace, Version: rel.Revision, Chart: rd.chart.Chart,
		Config: rd.config, Manifest: m, Info: info,
		// The objects are applied server-side, but the record says
		// client-side: helm applies its next upgrade or rollback by the
		// method the record names, and a server-side apply of it would stop
		// at a conflict with every field we own. Its three-way patch instead
		// goes through and takes the fields it changes, which the next plan
		// shows as drift on them and reverts.
		ApplyMethod: string(release.ApplyMethodClientSideApply)}
	for _, h := range rd.hooks {
		text, err := yaml.Marshal(h.obj.Object)
		if err != nil {
			return nil, err
		}
		out.Hooks = append(out.Hooks, &release.Hook{Name: h.obj.GetName(), Kind: h.obj.GetKind(), Path: h.key,
			Manifest: string(text), Events: h.events, Weight: h.weight, DeletePolicies: h.policies})
	}
	return out, nil
}

// releaseManifest is the release's objects as helm keeps them in a record: YAML
// documents, each under a `# Source:` line, in install order. The CRDs of
// crds/ are not in it, as they are not in helm's, so that `helm uninstall`
// keeps them too.
func releaseManifest(pieces []piece) (string, error) {
	var b strings.Builder
	for _, p := range pieces {
		if p.fromCRDsDir {
			continue
		}
		y, err := yaml.Marshal(p.obj.Object)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s", p.key, y)
	}
	return b.String(), nil
}

// recordedHooks are the hooks a record keeps, ready to run. A hook whose
// manifest names no namespace (helm records them as the chart renders them)
// runs in the release's namespace when its kind is namespaced, as helm runs
// it; the API server would put it in "default", and a delete at the
// template's identity would miss it.
func recordedHooks(rec *release.Release, id string, finder yamldocs.ScopeFinder) ([]hook, error) {
	var out []hook
	scopes := map[schema.GroupKind]bool{}
	for _, rh := range rec.Hooks {
		obj, err := manifest.Parse(rh.Manifest)
		if err != nil {
			return nil, fmt.Errorf("hook %s: %w", rh.Path, err)
		}
		if obj.GetNamespace() == "" {
			gk := obj.GroupVersionKind().GroupKind()
			namespaced, seen := scopes[gk]
			if !seen {
				if namespaced, _, err = finder.Namespaced(gk); err != nil {
					return nil, fmt.Errorf("hook %s: finding the scope of %s: %w", rh.Path, gk, err)
				}
				scopes[gk] = namespaced
			}
			if namespaced {
				obj.SetNamespace(rec.Namespace)
			}
		}
		out = append(out, hook{piece: piece{key: rh.Path, obj: obj, red: sensitive.New(id, nil)},
			events: rh.Events, weight: rh.Weight, policies: rh.DeletePolicies})
	}
	return out, nil
}

// recordedObjects are the objects of a release's record, as the private
// state of an apply would name them: an adopted release's first apply
// deletes those its chart no longer renders, as an upgrade by helm would.
func recordedObjects(rec *release.Release, finder yamldocs.ScopeFinder) (private, error) {
	scoped, err := recordedManifests(rec, finder)
	if err != nil {
		return nil, err
	}
	out := private{}
	for _, m := range []map[string]string{scoped.CRDs, scoped.ClusterScoped, scoped.Namespaced} {
		for key, body := range m {
			var head struct {
				APIVersion string `json:"apiVersion"`
			}
			if err := json.Unmarshal([]byte(body), &head); err != nil {
				return nil, err
			}
			out[key] = privateObject{APIVersion: head.APIVersion}
		}
	}
	return out, nil
}

// recordedManifests are the objects of a record's manifest by scope, each
// placed in the release namespace when it names none, as helm places it;
// those of kinds the cluster no longer serves are left out (dropUnserved).
func recordedManifests(rec *release.Release, finder yamldocs.ScopeFinder) (yamldocs.Scoped, error) {
	docs := yamldocs.SplitDocuments("the release record's manifest", []byte(rec.Manifest))
	docs = slices.DeleteFunc(docs, func(d yamldocs.Document) bool { return !yamldocs.HasContent(d.Text) })
	manifests, err := yamldocs.Split(docs)
	if err != nil {
		return yamldocs.Scoped{}, err
	}
	if err := dropUnserved(manifests, finder); err != nil {
		return yamldocs.Scoped{}, err
	}
	return yamldocs.ClassifyInNamespace(manifests, finder, rec.Namespace)
}

// dropUnserved drops from manifests the objects of kinds the cluster no
// longer serves and no CRD among them defines: a CRD deleted since (one of
// crds/, which the record does not list, or one deleted by hand) took every
// object of its kind with it, so there is nothing of them to read or delete.
func dropUnserved(manifests map[string]yamldocs.Manifest, finder yamldocs.ScopeFinder) error {
	defined := map[schema.GroupKind]bool{}
	for _, m := range manifests {
		if m.CRD != nil {
			defined[schema.GroupKind{Group: m.CRD.Group, Kind: m.CRD.Kind}] = true
		}
	}
	for key, m := range manifests {
		gk := m.GroupKind()
		if defined[gk] {
			continue
		}
		if _, builtin := yamldocs.BuiltinNamespaced(gk); builtin {
			continue
		}
		_, known, err := finder.Namespaced(gk)
		if err != nil {
			return err
		}
		if !known {
			delete(manifests, key)
		}
	}
	return nil
}

// unaccounted are the objects of release namespace/name that the latest
// record lists and known lacks, and that are still this release's in the
// cluster (they carry its marks): an object `helm upgrade` added from
// elsewhere, or every object of a release imported or moved in and not yet
// applied. An upgrade deletes those the chart does not render, and a
// destroy every one, as helm's upgrade and uninstall would; an object the
// record lists that another release or tool now holds is never one of them.
func unaccounted(ctx context.Context, c *connection.Client, latest *release.Release, known private,
	namespace, name string) (private, error) {
	out := private{}
	if latest == nil {
		return out, nil
	}
	recorded, err := recordedObjects(latest, c)
	if err != nil {
		return nil, fmt.Errorf("reading the release record's manifest: %w", err)
	}
	for key, o := range recorded {
		if _, ok := known[key]; ok {
			continue
		}
		id, err := identityOf(key, o)
		if err != nil {
			return nil, err
		}
		live, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
		switch {
		case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if objectplan.HolderOf(live).InRelease(namespace, name) {
			out[key] = o
		}
	}
	return out, nil
}

// recordedRun is where rec keeps h's last run; a scratch one without rec.
func recordedRun(rec *release.Release, h hook) *release.HookExecution {
	if rec != nil {
		for _, rh := range rec.Hooks {
			if rh.Path == h.key {
				return &rh.LastRun
			}
		}
	}
	return &release.HookExecution{}
}
