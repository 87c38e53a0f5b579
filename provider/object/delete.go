package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// Kinds whose deletion routinely waits on other objects (namespace contents,
// custom resources, volume detachment, ordered pod shutdown).
var slowDeletes = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "PersistentVolume": true,
	"PersistentVolumeClaim": true, "StatefulSet": true,
}

func deleteTimeoutFor(kind string, configured types.String) time.Duration {
	if d, err := time.ParseDuration(configured.ValueString()); err == nil && d > 0 {
		return d
	}
	if slowDeletes[kind] {
		return 10 * time.Minute
	}
	return 5 * time.Minute
}

// stuckError is a delete that timed out; it says what the object waits for.
type stuckError struct {
	id         manifest.Identity
	timeout    time.Duration
	finalizers []string
	remaining  []string // for a Namespace: what its status says is left inside
}

func (e *stuckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s still exists %s after deletion was requested.", e.id, e.timeout)
	if len(e.finalizers) > 0 {
		fmt.Fprintf(&b, " It waits for finalizers: %s.", strings.Join(e.finalizers, ", "))
	}
	for _, r := range e.remaining {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	if len(e.remaining) > 0 {
		// force_destroy clears the Namespace's own finalizers, which do not
		// hold it here: the objects left inside do.
		b.WriteString("\nThe Namespace goes once everything in it is gone. Check the controllers behind the finalizers " +
			"above, or remove those finalizers from the objects left inside; set delete_timeout to wait longer.")
		return b.String()
	}
	b.WriteString("\nCheck the controllers that own these finalizers; set delete_timeout to wait longer, or " +
		"force_destroy = true to remove the finalizers after the timeout.")
	return b.String()
}

// deleteAndWait deletes the object and waits until it is gone, so whatever
// depends on its absence (a namespace, a CRD, a re-create) sees it gone.
func deleteAndWait(ctx context.Context, c *connection.Client, id manifest.Identity, timeout time.Duration) error {
	mapping, err := c.Mapping(id.GVK())
	if meta.IsNoMatchError(err) {
		return nil // the kind itself is gone (its CRD was deleted), so is the object
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", id, err)
	}
	ri := c.Resource(mapping, id.Namespace)
	propagation := metav1.DeletePropagationBackground
	// A delete is idempotent (an object already gone counts as deleted), so a
	// request whose fate is unknown is sent again.
	err = retry(ctx, transient, func(ctx context.Context) error {
		err := ri.Delete(ctx, id.Name, metav1.DeleteOptions{PropagationPolicy: &propagation})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", id, err)
	}
	last, err := waitGone(ctx, c, id, timeout)
	if err == nil {
		return nil
	}
	if last == nil || !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("waiting for %s to be deleted: %w", id, err)
	}
	stuck := &stuckError{id: id, timeout: timeout, finalizers: append([]string(nil), last.GetFinalizers()...)}
	sort.Strings(stuck.finalizers)
	if id.Kind == "Namespace" {
		conds, _, _ := unstructured.NestedSlice(last.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["status"] == "True" && (m["type"] == "NamespaceContentRemaining" || m["type"] == "NamespaceFinalizersRemaining") {
				stuck.remaining = append(stuck.remaining, fmt.Sprint(m["message"]))
			}
		}
	}
	return stuck
}

// waitGone polls until the object is gone; it returns the last copy seen.
func waitGone(ctx context.Context, c *connection.Client, id manifest.Identity, timeout time.Duration) (*unstructured.Unstructured, error) {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		obj, err := get(ctx, c, id)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err == nil {
			last = obj
		}
		// Anything else (a dropped connection, the client's rate limiter near
		// the deadline) is transient: keep waiting until the timeout.
		return false, nil
	})
	return last, err
}

func removeFinalizersAndWait(ctx context.Context, c *connection.Client, id manifest.Identity) error {
	mapping, err := c.Mapping(id.GVK())
	if err != nil {
		return err
	}
	_, err = c.Resource(mapping, id.Namespace).Patch(ctx, id.Name, ktypes.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: "k8sconnect-force-destroy"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("force_destroy could not remove the finalizers of %s: %w", id, err)
	}
	if _, err := waitGone(ctx, c, id, time.Minute); err != nil {
		return fmt.Errorf("%s still exists a minute after its finalizers were removed: %w", id, err)
	}
	return nil
}

// durationValidator accepts Go durations greater than zero ("90s", "15m").
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "a positive duration such as 90s or 15m"
}
func (v durationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q is not a positive duration; use a form such as \"90s\", \"15m\" or \"1h\".", req.ConfigValue.ValueString()))
	}
}
