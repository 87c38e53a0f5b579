package helmrelease

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// One object of the release: the object a key names, who else holds it, its
// projection and its element of objects.

// identityOf is the object a key of objects names.
func identityOf(key string, o privateObject) (manifest.Identity, error) {
	group, kind, ns, name, err := yamldocs.ParseKey(key)
	if err != nil {
		return manifest.Identity{}, err
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil || gv.Group != group {
		return manifest.Identity{}, fmt.Errorf("%s: the private state names apiVersion %q for it; refresh and apply again", key, o.APIVersion)
	}
	return manifest.Identity{APIVersion: o.APIVersion, Kind: kind, Namespace: ns, Name: name}, nil
}

// takenBy names who else holds the object p would create (another release,
// a k8sconnect_object, anything made outside Helm); "" when it does not exist
// or is this release's own, from an apply that did not finish.
func takenBy(ctx context.Context, c *connection.Client, p piece) (string, error) {
	id := manifest.IdentityOf(p.obj)
	live, err := c.GetMetadata(ctx, id.GVK(), p.obj.GetNamespace(), id.Name)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading it: %w", err)
	}
	ann := p.obj.GetAnnotations()
	if holder := objectplan.HolderOf(live); !holder.InRelease(ann[annotationReleaseNS], ann[annotationReleaseName]) {
		return holder.String(), nil
	}
	return "", nil
}

// adoptable names who holds the object p would create, for take_ownership
// to take it from; "" when it does not exist or is this release's own. An
// object whose fields k8sconnect's own field manager holds (a
// k8sconnect_object's, a manifest set's, another k8sconnect_helm_release's)
// cannot be handed over, and is refused. managers are the field managers to
// take its fields from.
func adoptable(ctx context.Context, c *connection.Client, p piece) (holder string, managers []string, err error) {
	id := manifest.IdentityOf(p.obj)
	live, err := c.GetMetadata(ctx, id.GVK(), p.obj.GetNamespace(), id.Name)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return "", nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("reading it: %w", err)
	}
	ann := p.obj.GetAnnotations()
	h := objectplan.HolderOf(live)
	if h.InRelease(ann[annotationReleaseNS], ann[annotationReleaseName]) {
		return "", nil, nil
	}
	if slices.Contains(h.Managers, ssa.FieldManager) {
		return "", nil, fmt.Errorf("it already exists and belongs to %s, whose fields k8sconnect's field manager "+
			"holds, so take_ownership cannot hand them over; nothing was changed. Remove it from the chart (or from "+
			"the other owner), or delete it first if it is meant to be this release's", h.String())
	}
	for _, m := range h.Managers {
		if !slices.Contains(managers, m) {
			managers = append(managers, m)
		}
	}
	return h.String(), managers, nil
}

// observe projects obj onto the fields k8sconnect owns there plus prev,
// without Helm's marks.
func observe(obj *unstructured.Unstructured, prev *fieldpath.Set, p piece) (projection.Observation, error) {
	return projection.ObserveRedacted(obj, ssa.FieldManager, prev, helmMarks, p.ignored, p.red)
}
