package patch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// rivalError refuses a patch that would take fields another k8sconnect_patch
// manages.
type rivalError struct{ msg string }

func (e *rivalError) Error() string { return e.msg }

// sendUnrivalled checks, at apply as at plan, that no other k8sconnect_patch
// owns the fields this patch takes, and sends the patch bound to the target's
// resourceVersion that was checked, so a rival that arrives in between makes
// the server refuse the patch (and the check runs again on the new version)
// instead of slipping through. A check it cannot complete refuses.
func sendUnrivalled(ctx context.Context, c *connection.Client, target manifest.Identity, ct *content, manager string,
	plan *model, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var planned map[string]string
	if !plan.ManagedFields.IsUnknown() && !plan.ManagedFields.IsNull() {
		planned = map[string]string{}
		if d := plan.ManagedFields.ElementsAs(ctx, &planned, false); d.HasError() {
			return nil, fmt.Errorf("reading the planned managed_fields: %v", d)
		}
	}
	var result *unstructured.Unstructured
	first := true
	// A patch whose answer the network lost may have landed. Read the target
	// and check again before sending it again: our own manager holding the
	// fields is no rival, and an apply or merge patch sent twice is the same
	// as once. A JSON Patch is not (a "remove" cannot apply twice), so its
	// unknown outcome is left to the next run's plan (ADR 0002, ADR 0012). A
	// read or dry run that got no answer has had its budget already.
	resendable := func(err error) bool {
		return changedSince(ctx, c, target, live, err) ||
			(connection.IsNetworkFailure(err) && !connection.Exhausted(err) && ct.patchType != ktypes.JSONPatchType)
	}
	err := retry.OnError(targetChanged, resendable, func() error {
		if !first {
			// The target changed since it was read, or the last attempt's
			// fate is unknown: read it and check again.
			mapping, err := c.Mapping(target.GVK())
			if err != nil {
				return err
			}
			if live, err = c.Resource(mapping, target.Namespace).Get(ctx, target.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		first = false
		taking := projection.Projection(planned)
		if taking == nil {
			// Not known at plan (the target was created in this run): the
			// server's dry run says which fields the patch takes.
			dry, err := send(ctx, c, target, ct, manager, true, "")
			if err != nil {
				return err
			}
			obs, err := projection.Observe(dry, manager, nil, nil, nil)
			if err != nil {
				return err
			}
			taking = maps.Clone(obs.Projection)
		}
		rivals, err := rivalPatches(live, manager, taking)
		if err != nil {
			return fmt.Errorf("could not check %s for rival patches, so nothing was patched: %w", target, err)
		}
		if len(rivals) > 0 {
			return &rivalError{rivalMessage(target.String(), rivals)}
		}
		result, err = send(ctx, c, target, ct, manager, false, live.GetResourceVersion())
		return err
	})
	return result, err
}

// targetChanged paces the attempts of a patch whose target changed between
// the read and the write. A controller may be writing to it at that moment
// (a Deployment rolling out updates its status many times a second), so the
// twelve attempts spread over about seven seconds, the last waits the
// longest. (No Cap: wait.Backoff ends its steps when a wait reaches it.)
var targetChanged = wait.Backoff{Steps: 12, Duration: 25 * time.Millisecond, Factor: 1.6, Jitter: 0.2}

// changedSince reports a patch refused because the target is no longer the
// version it was bound to: a conflict, or (for a JSON Patch) its leading
// resourceVersion test failing.
func changedSince(ctx context.Context, c *connection.Client, target manifest.Identity, live *unstructured.Unstructured, err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	if !patchRefused(err) {
		return false
	}
	mapping, merr := c.Mapping(target.GVK())
	if merr != nil {
		return false
	}
	now, gerr := c.Resource(mapping, target.Namespace).Get(ctx, target.Name, metav1.GetOptions{})
	return gerr == nil && now.GetResourceVersion() != live.GetResourceVersion()
}

// selfPatchError refuses to patch an object that k8sconnect_object manages:
// two resources of one configuration would fight over it.
func selfPatchError(live *unstructured.Unstructured, target manifest.Identity) error {
	holder := objectplan.HolderOf(live)
	if holder.ApplySet != "" && slices.Contains(holder.Managers, ssa.FieldManager) {
		return fmt.Errorf("%s is a member of %s, which k8sconnect applies. k8sconnect_patch is for objects something "+
			"else manages. Change the set's manifests instead, or list the fields another controller should own in "+
			"its ignore_fields", target, holder)
	}
	if !holder.ManagedByObject() {
		return nil
	}
	return fmt.Errorf("%s is managed by a k8sconnect_object (annotation %s or field manager %q). "+
		"k8sconnect_patch is for objects something else manages. Change the k8sconnect_object's yaml_body instead, "+
		"or list the fields another controller should own in its ignore_fields", target, ssa.AnnotationOwnedBy, ssa.FieldManager)
}

// pathNames names paths for the ownership lookups below. A patch hides only a
// Secret's data, whose paths are field names and never carry a value, so any
// redactor names them alike.
var pathNames = sensitive.Redactor{}

// rivalPatches finds other k8sconnect patches that own fields this one takes.
func rivalPatches(live *unstructured.Unstructured, manager string, taking projection.Projection) (map[string][]string, error) {
	fields, err := managedfields.Of(live)
	if err != nil {
		return nil, err
	}
	owners := projection.OwnersByPath(live.Object, fields, pathNames)
	rivals := map[string][]string{}
	for p := range taking {
		for _, m := range owners[p] {
			if m != manager && strings.HasPrefix(m, "k8sconnect-patch-") {
				rivals[m] = append(rivals[m], p)
			}
		}
	}
	return rivals, nil
}

// previousOwners lists, for the fields the patch takes, who owned them before.
func previousOwners(live *unstructured.Unstructured, manager string, taking projection.Projection) map[string][]string {
	fields, err := managedfields.Of(live)
	if err != nil {
		return map[string][]string{}
	}
	owners := projection.OwnersByPath(live.Object, fields, pathNames)
	out := map[string][]string{}
	for p := range taking {
		var others []string
		for _, m := range owners[p] {
			if m != manager {
				others = append(others, m)
			}
		}
		out[p] = others
	}
	return out
}
