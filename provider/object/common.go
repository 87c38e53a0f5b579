package object

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

const annotationOwnedBy = ssa.AnnotationOwnedBy

var annotationPath = objectpath.Path{objectpath.Field("metadata"), objectpath.Field("annotations"), objectpath.Field(annotationOwnedBy)}

const (
	// orderingTimeout is how long an apply waits for a kind (a CRD created in the
	// same run) or a namespace to appear, so users need no depends_on for them.
	orderingTimeout = 30 * time.Second
)

var pathConnection = path.Root("cluster_connection")

// client returns the cached client for a cluster_connection value.
func (r *Resource) client(ctx context.Context, conn types.Object, diags *diag.Diagnostics) (*connection.Client, bool) {
	return r.clients.ClientFor(ctx, conn, pathConnection, diags)
}

// desiredFromConfig is the object to apply: yaml_body without the ignored fields.
func desiredFromConfig(ctx context.Context, m model, diags *diag.Diagnostics) (*unstructured.Unstructured, []objectpath.Path) {
	ignore, ok := ignorePaths(ctx, m.IgnoreFields, diags)
	if !ok || m.YAMLBody.IsUnknown() || m.YAMLBody.IsNull() {
		return nil, ignore
	}
	obj, err := manifest.Parse(m.YAMLBody.ValueString())
	if err != nil {
		diags.AddAttributeError(pathYAMLBody, "Invalid yaml_body", err.Error())
		return nil, ignore
	}
	for i, p := range ignore {
		if len(p) > 0 && p[0].Field != nil && (*p[0].Field == "apiVersion" || *p[0].Field == "kind" ||
			(len(p) > 1 && *p[0].Field == "metadata" && p[1].Field != nil && (*p[1].Field == "name" || *p[1].Field == "namespace"))) {
			diags.AddAttributeError(path.Root("ignore_fields").AtListIndex(i), "Invalid ignore_fields entry",
				fmt.Sprintf("%s identifies the object and cannot be ignored.", p))
			continue
		}
		// Last first: removing a list element must not shift the indices of
		// the [*] matches still to remove.
		all := p.Expand(obj.Object)
		for j := len(all) - 1; j >= 0; j-- {
			all[j].Remove(obj.Object)
		}
	}
	return obj, ignore
}

// ignorePaths parses ignore_fields; ok is false when it is unknown or invalid.
func ignorePaths(ctx context.Context, list types.List, diags *diag.Diagnostics) ([]objectpath.Path, bool) {
	if list.IsNull() {
		return nil, true
	}
	if list.IsUnknown() {
		return nil, false
	}
	var raw []types.String
	diags.Append(list.ElementsAs(ctx, &raw, false)...)
	ok := !diags.HasError()
	var out []objectpath.Path
	for i, s := range raw {
		if s.IsUnknown() {
			ok = false
			continue
		}
		p, err := objectpath.Parse(s.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("ignore_fields").AtListIndex(i), "Invalid ignore_fields entry", err.Error())
			ok = false
			continue
		}
		out = append(out, p)
	}
	return out, ok
}

func setOwnedBy(obj *unstructured.Unstructured, id string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[annotationOwnedBy] = id
	obj.SetAnnotations(a)
}

func get(ctx context.Context, c *connection.Client, id manifest.Identity) (*unstructured.Unstructured, error) {
	return c.Get(ctx, id.GVK(), id.Namespace, id.Name)
}

// recallOrGet uses the copy a refresh or the last plan just read, if there is
// one, or reads the object.
func recallOrGet(ctx context.Context, c *connection.Client, id manifest.Identity) (recentObject, error) {
	if r, ok := recall(c, id); ok {
		return r, nil
	}
	seen := time.Now()
	obj, err := get(ctx, c, id)
	return recentObject{obj: obj, seen: seen}, err
}

// applyWithOrdering applies obj, waiting with backoff for a kind or namespace
// that another resource in the same run is still creating.
func applyWithOrdering(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var applied *unstructured.Unstructured
	err := retry(ctx, func(err error) bool { return waitsForOrdering(err) || transient(err) }, func(ctx context.Context) error {
		var err error
		applied, err = ssa.Apply(ctx, c, obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
		return err
	})
	lastErr := err
	if err == nil {
		if applied.GetNamespace() != "" {
			obj.SetNamespace(applied.GetNamespace())
		}
		return applied, nil
	}
	id := manifest.IdentityOf(obj)
	switch {
	case meta.IsNoMatchError(lastErr):
		return nil, fmt.Errorf("the cluster does not serve %s (apiVersion %s) after waiting %s. If a CRD defines it, "+
			"check the CRD's group, version and served flag; if the CRD is created in this run by a tool other "+
			"than k8sconnect, add depends_on", id.Kind, id.APIVersion, orderingTimeout)
	case apierrors.IsNotFound(lastErr):
		return nil, fmt.Errorf("namespace %q does not exist after waiting %s: create it (for example with another "+
			"k8sconnect_object) or fix metadata.namespace: %v", obj.GetNamespace(), orderingTimeout, lastErr)
	}
	return nil, fmt.Errorf("server-side apply of %s failed: %w", id, lastErr)
}

// retry calls f until it succeeds, fails in a way retryable rejects, or
// orderingTimeout has passed, backing off from 250ms to at most 4s between
// calls. It returns f's last error. (wait.ExponentialBackoff stops as soon as
// its cap is reached, long before the timeout; hence this loop.)
func retry(ctx context.Context, retryable func(error) bool, f func(context.Context) error) error {
	deadline := time.Now().Add(orderingTimeout)
	delay := 250 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil || !retryable(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(time.Duration(float64(delay)*1.6), 4*time.Second)
	}
}

// waitsForOrdering: the kind is not served yet, or the namespace does not exist
// yet (an apply never returns NotFound for the object itself).
func waitsForOrdering(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
