package helmrelease

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

const statusDeployed = string(common.StatusDeployed)

// labelWriter marks the records k8sconnect writes, so an install can tell
// its own unfinished release (resumed) from one made with the helm CLI
// (which must be imported, not silently taken).
const labelWriter = "k8sconnect.io/written-by"

// records are a namespace's release records, in Helm's Secret storage
// format, through Helm's own storage driver.
type records struct {
	store *storage.Storage
	err   error
}

func newRecords(c *connection.Client, namespace string, maxHistory int) *records {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return &records{err: err}
	}
	s := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(namespace)))
	s.MaxHistory = maxHistory
	return &records{store: s}
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
// write; one it wrote and did not finish (a failed wait, a killed apply)
// is taken up again.
func (r *records) checkInstall(name string) error {
	h, err := r.history(name)
	if err != nil || len(h) == 0 {
		return err
	}
	last := h[len(h)-1]
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

func (r *records) create(rel *release.Release) error {
	if r.err != nil {
		return r.err
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[labelWriter] = "k8sconnect"
	return r.store.Create(rel)
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
