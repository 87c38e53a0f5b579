package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
)

// release removes manager's entries from the target's managedFields. Applying
// an empty configuration instead would make the server delete every field only
// we own; editing managedFields directly hands them back with their values, so
// whoever manages the object next can claim them (ADR 0006: release, not revert).
func release(ctx context.Context, c *connection.Client, target manifest.Identity, manager string, fields map[string]string) error {
	mapping, err := c.Mapping(target.GVK())
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ri := c.Resource(mapping, target.Namespace)
	var live *unstructured.Unstructured
	// Each attempt reads the target first, so a release whose answer the
	// network lost is found done (our manager gone) instead of sent again. A
	// read that got no answer has had its budget already.
	changedOrLost := func(err error) bool {
		return apierrors.IsConflict(err) || (connection.IsNetworkFailure(err) && !connection.Exhausted(err))
	}
	err = retry.OnError(targetChanged, changedOrLost, func() error {
		live, err = ri.Get(ctx, target.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		entries := live.GetManagedFields()
		kept := entries[:0:0]
		for _, e := range entries {
			if e.Manager != manager {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(entries) {
			return nil
		}
		if len(kept) == 0 {
			// An empty list means "leave managedFields alone" to the server;
			// one empty entry clears them.
			kept = []metav1.ManagedFieldsEntry{{}}
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"managedFields": kept, "resourceVersion": live.GetResourceVersion(),
		}})
		if err != nil {
			return err
		}
		_, err = ri.Patch(ctx, target.Name, ktypes.MergePatchType, body, metav1.PatchOptions{FieldManager: manager})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("releasing the fields of %s: %w", target, err)
	}
	recordRelease(ctx, c, live, manager, fields)
	return nil
}

// recordRelease leaves a Kubernetes Event on the target, so `kubectl describe`
// shows who let go of which fields. Failing to record it does not fail destroy.
func recordRelease(ctx context.Context, c *connection.Client, target *unstructured.Unstructured, manager string, fields map[string]string) {
	paths := make([]string, 0, len(fields))
	for p := range fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ns := target.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	now := metav1.NewTime(time.Now())
	event := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Event",
		"metadata":   map[string]any{"generateName": target.GetName() + ".k8sconnect-release-", "namespace": ns},
		"involvedObject": map[string]any{
			"apiVersion": target.GetAPIVersion(), "kind": target.GetKind(), "name": target.GetName(),
			"namespace": target.GetNamespace(), "uid": string(target.GetUID()),
		},
		"reason":         "OwnershipReleased",
		"message":        fmt.Sprintf("%s released %s; the values stay.", manager, strings.Join(paths, ", ")),
		"type":           "Normal",
		"source":         map[string]any{"component": "k8sconnect"},
		"firstTimestamp": now.UTC().Format(time.RFC3339),
		"lastTimestamp":  now.UTC().Format(time.RFC3339),
		"count":          int64(1),
	}}
	events := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns)
	_, _ = events.Create(ctx, event, metav1.CreateOptions{})
}
