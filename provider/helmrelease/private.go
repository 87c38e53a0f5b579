package helmrelease

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// privateKey holds, per object key, what a refresh needs and the plan does
// not show: the object's apiVersion (the key has only its group) and the
// fields that hold set_sensitive values (a refresh renders nothing, yet must
// hide the same). What k8sconnect_object keeps of its one object (the fields
// owned after the last apply, the values applied, revert streaks: ADR 0004
// and 0008) is kept per object under privatestate.Of.
const privateKey = "release_objects"

type privateObject struct {
	APIVersion string   `json:"apiVersion"`
	Sensitive  []string `json:"sensitive,omitempty"`
	// Body is a hash of the body the last apply sent: a plan that renders
	// the same body for an object untouched since needs no dry run.
	Body string `json:"body,omitempty"`
	// FromCRDsDir marks a CRD of crds/, never deleted (see piece).
	FromCRDsDir bool `json:"fromCRDsDir,omitempty"`
}

type private map[string]privateObject

func loadPrivate(ctx context.Context, r privatestate.Reader) (private, error) {
	p, _, err := privatestate.Load[private](ctx, r, privateKey)
	if p == nil {
		p = private{}
	}
	return p, err
}

func (p private) save(ctx context.Context, w privatestate.Writer) diag.Diagnostics {
	return privatestate.Save(ctx, w, privateKey, p)
}

// mergedPrivate is p with the objects of more it lacks, in a map of its
// own.
func mergedPrivate(p, more private) private {
	out := maps.Clone(p)
	if out == nil {
		out = private{}
	}
	for key, o := range more {
		if _, ok := out[key]; !ok {
			out[key] = o
		}
	}
	return out
}

// redactor renders the object's sensitive values as its last apply did.
func (o privateObject) redactor(id string) sensitive.Redactor {
	var paths []objectpath.Path
	for _, s := range o.Sensitive {
		if p, err := objectpath.Parse(s); err == nil {
			paths = append(paths, p)
		}
	}
	return sensitive.New(id, paths)
}

func newPrivateObject(p piece) privateObject {
	return privateObject{APIVersion: p.obj.GetAPIVersion(), Sensitive: p.sensitivePaths, FromCRDsDir: p.fromCRDsDir,
		Body: objectset.BodyHash(p.obj, p.red)}
}

// privateRenderedAs is how the last apply rendered the chart: the revision
// and install-or-upgrade that templates saw as .Release.Revision and
// .Release.IsUpgrade. A plan whose values did not change renders as that
// apply did, so a chart that writes either into an object (an annotation
// with the revision, a ConfigMap that says whether it was installed) plans
// no change when nothing changed; only a real upgrade renders as the next
// revision.
const privateRenderedAs = "release_rendered_as"

type renderedAs struct {
	Revision  int  `json:"revision"`
	IsUpgrade bool `json:"isUpgrade"`
	// ChartDigest is what the chart was (helmchart.Digest): the same inputs
	// with another chart (a directory edited in place, an archive
	// republished, a hook changed) are an upgrade, not a repair. Empty for
	// an apply from before it was kept, which is then taken as the same.
	ChartDigest string `json:"chartDigest,omitempty"`
	// WriteOnly is the digest of the set_wo it rendered with
	// (writeOnlyDigest), never the values.
	WriteOnly string `json:"writeOnly,omitempty"`
}

// lastRender is how the last apply rendered, if it was kept.
func lastRender(ctx context.Context, r privatestate.Reader) *renderedAs {
	as, ok, err := privatestate.Load[renderedAs](ctx, r, privateRenderedAs)
	if err != nil || !ok {
		return nil
	}
	return &as
}

// privateAdopting marks a release imported from another tool and not yet
// applied: its first apply takes its objects over in place and then hands
// over the fields Helm's field manager held, so each has one owner.
const privateAdopting = "release_adopting"

// adopting reports whether the release waits for the apply that adopts it.
func adopting(ctx context.Context, r privatestate.Reader) bool {
	v, _, _ := privatestate.Load[bool](ctx, r, privateAdopting)
	return v
}

// privatePruned holds, by key, the fields disable_openapi_validation left
// out of each object and hook at the last apply, so that a plan warns of
// those it leaves out only when they are news (warnPruned).
const privatePruned = "release_pruned"

// lastPruned are the fields the last apply left out, by key.
func lastPruned(ctx context.Context, r privatestate.Reader) map[string][]string {
	p, _, _ := privatestate.Load[map[string][]string](ctx, r, privatePruned)
	return p
}
