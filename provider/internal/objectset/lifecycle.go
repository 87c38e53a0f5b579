package objectset

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/deletion"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// WaitEstablished waits until a CRD's kind is served: its Established
// condition, after which the client maps the kind from the CRD itself
// (connection.LearnEstablished). The API server sets the condition before
// its discovery document lists the kind; a client that maps kinds by
// discovery alone fails a custom resource applied in that window with "no
// matches for kind" (seen in CI: the set's custom resource right after its
// CRD), or waits for discovery, 1.5 s for ten CRDs on a busy machine. A CRD
// read without accepted names waits for discovery to list its kind in every
// version it serves.
func WaitEstablished(ctx context.Context, c *connection.Client, crd *unstructured.Unstructured, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	m, err := c.Mapping(crd.GroupVersionKind())
	if err != nil {
		return err
	}
	eval := func(obj *unstructured.Unstructured) waiting.State {
		return waiting.Spec{Condition: "Established"}.Evaluate(obj)
	}
	res, err := waiting.Until(ctx, c.Resource(m, ""), crd.GetName(), eval, waiting.Options{Timeout: timeout})
	if err != nil {
		return err
	}
	if res.Object != nil {
		c.LearnEstablished(res.Object)
	}
	for _, gvk := range connection.ServedKinds(crd) {
		if err := waitMapped(ctx, c, gvk, deadline); err != nil {
			return err
		}
	}
	return nil
}

// DefinedKinds are the kinds the CRDs among objs define, in any version.
func DefinedKinds(objs []*unstructured.Unstructured) map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() != crdKind {
			continue
		}
		for _, gvk := range connection.ServedKinds(obj) {
			out[gvk.GroupKind()] = true
		}
	}
	return out
}

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// waitMapped asks discovery for gvk until it is listed or deadline passes.
// Each miss renews the client's discovery (Mapping resets it on a miss).
func waitMapped(ctx context.Context, c *connection.Client, gvk schema.GroupVersionKind, deadline time.Time) error {
	pause := 50 * time.Millisecond
	for {
		_, err := c.Mapping(gvk)
		if err == nil || !meta.IsNoMatchError(err) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("the CRD is Established but the API server's discovery does not list %s yet: %w", gvk, err)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// DeleteAndWait deletes the object read as live, bound to its UID, and waits
// until it is gone or deadline passes.
func DeleteAndWait(ctx context.Context, c *connection.Client, id manifest.Identity, live *unstructured.Unstructured, deadline time.Time) error {
	uid := live.GetUID()
	err := deletion.Delete(ctx, c, id, uid, "")
	if apierrors.IsNotFound(err) || deletion.Replaced(ctx, c, id, uid, err) {
		return nil // gone, or already replaced by another
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", id, err)
	}
	last, err := deletion.WaitGone(ctx, c, id, uid, max(time.Until(deadline), time.Millisecond))
	switch {
	case err == nil:
		return nil
	case last != nil && optimeout.Of(err) != nil:
		return fmt.Errorf("%s; it is left as it is (finalizers: %v)", optimeout.Of(err).While("waiting for "+id.String()+" to be deleted"), last.GetFinalizers())
	case last != nil && errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("%s is still being deleted (finalizers: %v); it will be deleted when they are done", id, last.GetFinalizers())
		for _, h := range deletion.Holding(last) {
			msg += "\n  the API server says: " + h
		}
		return errors.New(msg)
	}
	return fmt.Errorf("waiting for %s to be deleted: %w", id, err)
}

var jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// WaitReady waits, in parallel and until deadline, until every object of
// applied that keys names is ready by k8sconnect_wait's ready rule (one rule
// for the wait, the release and the set: docs/guides/waiting.md). A Job is
// ready once started, as Helm 4's --wait takes it; with jobs, once
// complete. A key without an applied object (one this apply left alone) is
// not waited for. It returns the keys of the objects that did not get
// ready, and an error that names each, with what it and its Pods are doing.
func WaitReady(ctx context.Context, c *connection.Client, keys []string, applied map[string]*unstructured.Unstructured,
	deadline time.Time, jobs bool) (map[string]bool, error) {
	errs := make([]error, len(keys))
	InParallel(len(keys), func(i int) {
		obj := applied[keys[i]]
		spec := waiting.Spec{Ready: true}
		if jobs && obj != nil && obj.GroupVersionKind().GroupKind() == jobKind {
			spec = waiting.Spec{Condition: "Complete"}
		}
		if obj == nil || spec.Evaluate(obj).Met {
			return
		}
		m, err := c.Mapping(obj.GroupVersionKind())
		if err != nil {
			errs[i] = fmt.Errorf("%s: %w", keys[i], err)
			return
		}
		res, err := waiting.Until(ctx, c.Resource(m, obj.GetNamespace()), obj.GetName(), spec.Evaluate,
			waiting.Options{Timeout: max(time.Until(deadline), time.Second)})
		if op := optimeout.Of(err); op != nil {
			// The operation's deadline: no request outlives it, so no
			// pods are listed; what the wait saw last is said.
			errs[i] = fmt.Errorf("%s: %s\n%s", op.While("waiting for "+keys[i]+" to be ready"), res.State.Summary,
				waiting.Explain(spec, res, nil))
			return
		}
		if err != nil {
			pods, _ := waiting.Pods(ctx, c.Dynamic, res.Object)
			errs[i] = fmt.Errorf("%s is not ready: %w\n%s", keys[i], err, waiting.Explain(spec, res, pods))
		}
	})
	notReady := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			notReady[keys[i]] = true
		}
	}
	return notReady, errors.Join(errs...)
}
