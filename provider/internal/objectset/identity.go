package objectset

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// PreferredVersion is the apiVersion to name the object key names by when
// nothing recorded one (a state from an import; a Pulumi destroy, which is
// given no private state): its kind's preferred version. "" when the cluster
// no longer serves the kind, whose every object is gone with it.
func PreferredVersion(c *connection.Client, key string) (string, error) {
	group, kind, _, _, err := yamldocs.ParseKey(key)
	if err != nil {
		return "", err
	}
	m, err := c.Mapping(schema.GroupKind{Group: group, Kind: kind}.WithVersion(""))
	if meta.IsNoMatchError(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return m.GroupVersionKind.GroupVersion().String(), nil
}

// IdentityOf is the object key names, by apiVersion or, when that is "",
// by PreferredVersion; nil when its kind is gone.
func IdentityOf(c *connection.Client, key, apiVersion string) (*manifest.Identity, error) {
	_, kind, ns, name, err := yamldocs.ParseKey(key)
	if err != nil {
		return nil, err
	}
	if apiVersion == "" {
		if apiVersion, err = PreferredVersion(c, key); err != nil || apiVersion == "" {
			return nil, err
		}
	}
	return &manifest.Identity{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}, nil
}

// Refreshed is the object id names as a refresh reads it, and its element
// of objects: the fields k8sconnect owns (and owned, those it owned at the
// last apply) with their live values, without marks and ignored fields.
// Both are nil when the object is gone, or its kind is.
func Refreshed(ctx context.Context, c *connection.Client, id manifest.Identity, owned *fieldpath.Set, marks,
	ignored []objectpath.Path, red sensitive.Redactor) (attr.Value, *unstructured.Unstructured, error) {
	live, err := c.Get(ctx, id.GVK(), id.Namespace, id.Name)
	if connection.Gone(err, id.Name) || c.GoneWithItsKind(err, id.GVK()) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	obs, err := projection.ObserveRedacted(live, ssa.FieldManager, owned, marks, ignored, red)
	if err != nil {
		return nil, nil, err
	}
	return ProjectionValue(obs.Projection), live, nil
}
