package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// The CRDs of a chart's crds/ directories that exist before the release
// applies them. helm install creates them once, without the release's
// marks, skips one that exists and never upgrades one; the release upgrades
// them as its own (ADR 0013), so one that exists is either taken over or
// refused, by who holds it now:
//
//   - this release's marks: its own (an apply that did not finish);
//   - the marks of another release that still has records: left to it, as
//     helm install leaves a CRD that exists (two releases of one chart share
//     its CRDs; the first that installed them upgrades them);
//   - a k8sconnect_object's id: refused, naming it;
//   - the marks of a release that has none left (uninstalled, the CRD
//     outliving it as crds/ does): that release holds it no more;
//   - field managers that own fields the chart sets: helm's (helm install put
//     it there, for this release or another; helm never touches it again)
//     and kubectl's (a person's hand, which no process repeats) are handed
//     over from; any other (an operator that installs or upgrades its CRDs)
//     holds it, and it is refused. A manager that owns only fields the chart
//     does not set (a caBundle a CA injector writes, the server's status)
//     keeps them and holds nothing the release sets.

// crdClaim is a CRD of crds/ that the release does not hold yet and that
// its apply makes its own: created (one that is absent), or taken over.
type crdClaim struct {
	// create: it was absent, and is created only if it still is.
	create bool
	// resourceVersion is the one the claim read: a takeover applies only
	// while it is still the live one.
	resourceVersion string
	// from are the field managers whose fields the chart sets: handed to
	// k8sconnect once applied (ssa.TakeOver).
	from []string
	// leftBy is the uninstalled release whose marks it carries, if any.
	leftBy string
	// respec: the apply changes its spec.
	respec bool
}

// crdOfAnotherRelease is a CRD of crds/ that another release holds, which
// this one leaves to it: not in objects, not applied.
type crdOfAnotherRelease struct {
	release string
	// respec: this chart's spec of it is not the live one.
	respec bool
}

func (e *crdOfAnotherRelease) Error() string {
	return "it is a CRD of the chart's crds/ directory that Helm release " + e.release + " holds"
}

// warning tells what leaving the CRD key to the other release means.
func (e *crdOfAnotherRelease) warning(key string) string {
	spec := "Its spec is this chart's already."
	if e.respec {
		spec = "Its spec is not this chart's: the chart of " + e.release + " decides it, and this release's " +
			"custom resources must fit it."
	}
	return fmt.Sprintf("%s, a CRD of the chart's crds/ directory, belongs to Helm release %s, which installed "+
		"it. This release leaves it to that one, as helm install leaves a CRD that exists: it is not in "+
		"objects and this release never changes it. %s Once %s is uninstalled (the CRD outlives it), the next "+
		"apply of this release takes it over. Set skip_crds = true to leave the CRDs of crds/ out of this "+
		"release altogether.", key, e.release, spec, e.release)
}

// crdHeldError refuses a CRD of crds/ that someone else holds.
type crdHeldError struct{ holder string }

func (e *crdHeldError) Error() string {
	return fmt.Sprintf("it is a CRD of the chart's crds/ directory, exists already and belongs to %s; nothing was "+
		"changed. Set skip_crds = true to leave the CRDs of crds/ as they are (as helm install leaves one that "+
		"exists), or have the other owner let it go", e.holder)
}

// claimCRD decides whether the release may take over live, an existing CRD
// of crds/ (p) that it does not hold yet; dry is what a dry run of its apply
// answers. It returns nil for one that is the release's already, a
// *crdOfAnotherRelease for one that another release holds, and a
// *crdHeldError for one someone else holds.
func claimCRD(c *connection.Client, p piece, live, dry *unstructured.Unstructured) (*crdClaim, error) {
	h := objectplan.HolderOf(live)
	ann := p.obj.GetAnnotations()
	if h.InRelease(ann[annotationReleaseNS], ann[annotationReleaseName]) {
		return nil, nil
	}
	if h.Resource != "" {
		return nil, &crdHeldError{holder: h.String()}
	}
	t := &crdClaim{}
	if h.ReleaseName != "" {
		history, err := newRecords(c, h.ReleaseNamespace, 0).history(h.ReleaseName)
		if err != nil {
			return nil, fmt.Errorf("%s carries the marks of release %s/%s: %w", p.key, h.ReleaseNamespace, h.ReleaseName, err)
		}
		if len(history) > 0 {
			return nil, &crdOfAnotherRelease{release: h.ReleaseNamespace + "/" + h.ReleaseName,
				respec: !reflect.DeepEqual(live.Object["spec"], dry.Object["spec"])}
		}
		t.leftBy = h.ReleaseNamespace + "/" + h.ReleaseName
	}
	fields, err := managedfields.Of(live)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.key, err)
	}
	dryFields, err := managedfields.Of(dry)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.key, err)
	}
	ours := dryFields.Manager(ssa.FieldManager)
	var holders []string
	for _, e := range live.GetManagedFields() {
		m := e.Manager
		if e.Subresource != "" || slices.Contains(t.from, m) || slices.Contains(holders, m) {
			continue
		}
		switch {
		case m == ssa.FieldManager && t.leftBy != "":
			continue // the uninstalled release applied it, under the same name
		case m == ssa.FieldManager:
			// Without a release's marks: a k8sconnect_object imported and
			// not applied yet.
			return nil, &crdHeldError{holder: "a k8sconnect_object (k8sconnect's field manager holds it)"}
		case fields.Manager(m).Intersection(ours).Empty():
			continue // none of the fields the chart sets
		case helmManager(m) || kubectlManager(m):
			t.from = append(t.from, m)
		default:
			holders = append(holders, m)
		}
	}
	if len(holders) > 0 {
		return nil, &crdHeldError{holder: objectplan.Holder{Managers: holders}.String()}
	}
	t.respec = !reflect.DeepEqual(live.Object["spec"], dry.Object["spec"])
	return t, nil
}

// applyClaimed applies obj, a CRD of crds/ that the release claims (t), in
// one step with the claim: created only if it is still absent, taken over
// only if it did not change since the claim read it. Two releases of one
// chart installing at the same moment would otherwise both apply it and take
// it from each other at every apply after; the one that comes second is told
// so instead, and its next plan leaves the CRD to the first.
func applyClaimed(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured, t *crdClaim) (*unstructured.Unstructured, error) {
	version := t.resourceVersion
	if t.create {
		version = ssa.CreateOnlyVersion
	}
	obj.SetResourceVersion(version)
	out, err := ssa.Apply(ctx, c, obj, ssa.Options{FieldManager: ssa.FieldManager})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, errClaimLost
	}
	return out, err
}

const claimLostSummary = "A CRD of the chart was taken meanwhile"

var errClaimLost = errors.New("someone else made or changed it while this apply ran (another release of the " +
	"chart installing at the same moment?); this apply left it as it is and applied nothing else. Apply again: " +
	"the plan then says who holds it")

// kubectlManager tells the field managers kubectl writes under: kubectl for
// its server-side apply, kubectl-<verb> for the others.
func kubectlManager(name string) bool {
	return name == "kubectl" || strings.HasPrefix(name, "kubectl-")
}

// warning tells, at plan time, what taking the CRD key names over does.
func (t *crdClaim) warning(key string) string {
	var was []string
	if t.leftBy != "" {
		was = append(was, fmt.Sprintf("left by release %s, which has been uninstalled", t.leftBy))
	}
	if len(t.from) > 0 {
		was = append(was, "made by "+strings.Join(t.from, ", "))
	}
	if len(was) == 0 {
		was = append(was, "held by no one")
	}
	change := "Its spec is the chart's already."
	if t.respec {
		change = "This apply changes its spec to the chart's."
	}
	return fmt.Sprintf("%s, a CRD of the chart's crds/ directory, exists already (%s). This apply takes it over as "+
		"the release's own: applied by k8sconnect, which takes the fields the chart sets, and upgraded with the "+
		"chart from then on; like every CRD of crds/, it is never deleted. %s Set skip_crds = true to leave the "+
		"CRDs of crds/ as they are instead, as helm does.", key, strings.Join(was, "; "), change)
}

// claimCRDs makes, for each CRD of crds/ that the release does not hold yet
// (ours are the keys it does) and that exists, the claim the plan made,
// again before the apply writes anything: another owner may have come
// since. It returns the claims by key, and drops from rd the CRDs that
// another release holds, as the plan did; one that the plan (planned, the
// keys of its objects) still claimed was taken since: errClaimLost.
func claimCRDs(ctx context.Context, c *connection.Client, rd *rendered, ours, planned map[string]bool) (map[string]*crdClaim, error) {
	out := map[string]*crdClaim{}
	kept := rd.crds[:0:0]
	for _, p := range rd.crds {
		if !p.fromCRDsDir || ours[p.key] {
			kept = append(kept, p)
			continue
		}
		id := manifest.IdentityOf(p.obj)
		live, err := c.Get(ctx, id.GVK(), "", id.Name)
		switch {
		case apierrors.IsNotFound(err):
			out[p.key] = &crdClaim{create: true}
			kept = append(kept, p)
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: reading it: %w", p.key, err)
		}
		dry, err := ssa.Apply(ctx, c, p.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager, DryRun: true})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.key, err)
		}
		t, err := claimCRD(c, p, live, dry)
		if other := (*crdOfAnotherRelease)(nil); errors.As(err, &other) {
			if planned[p.key] {
				return nil, fmt.Errorf("%s: %w", p.key, errClaimLost)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.key, err)
		}
		if t != nil {
			t.resourceVersion = live.GetResourceVersion()
			out[p.key] = t
		}
		kept = append(kept, p)
	}
	rd.crds = kept
	return out, nil
}
