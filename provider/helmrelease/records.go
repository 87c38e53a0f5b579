package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
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

// checkInstall refuses to install over a release that k8sconnect did not
// write, or that another apply is working on now; one that k8sconnect wrote
// and did not finish (a failed wait, a killed apply whose record no one
// renews) is taken up again.
func (r *records) checkInstall(name string) error {
	h, err := r.history(name)
	if err != nil || len(h) == 0 {
		return err
	}
	last := h[len(h)-1]
	if busy, since := pending(last); busy && time.Since(since) < recordLease() {
		return busyError(last, since)
	}
	if last.Labels[labelWriter] == "k8sconnect" && last.Info != nil && last.Info.Status != common.StatusDeployed &&
		last.Info.Status != common.StatusSuperseded {
		return nil
	}
	status := "unknown"
	if last.Info != nil {
		status = last.Info.Status.String()
	}
	return fmt.Errorf("release %s/%s already exists in the cluster (revision %d, %s); k8sconnect will not install "+
		"over it. Import it into this resource instead, or uninstall it first (helm uninstall %s -n %s)",
		last.Namespace, name, last.Version, status, name, last.Namespace)
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
	for _, e := range earlier {
		if e.Info != nil && e.Info.Status == common.StatusDeployed {
			e.Info.Status = common.StatusSuperseded
			if err := r.update(e); err != nil {
				return err
			}
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
