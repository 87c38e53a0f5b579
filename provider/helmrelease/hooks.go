package helmrelease

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	release "helm.sh/helm/v4/pkg/release/v1"
	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectplan"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// hookRelease is the release whose hooks run. The hooks it creates carry
// its ownership marks, as its objects do, and its records say which unmarked
// objects its earlier runs made (runs from before hooks were marked, or by
// the helm CLI, which never marks them).
type hookRelease struct {
	name, namespace string
	history         []*release.Release
}

// clockSlack is how far apart the clock that timed a recorded hook run and
// the API server's (which stamps an object's creation) may be for an
// unmarked object to count as made by that run.
const clockSlack = 2 * time.Minute

// runHooks runs the hooks of event as Helm 4 runs them: by weight, then by
// name, then kind in Helm's install order (for every event, pre-delete and
// post-delete too: Helm sorts a release's hooks once, when it renders them);
// each applied and awaited (a Job until it completes, a Pod until it
// succeeds) before the next. The first failure stops the run. Those whose
// policy is hook-succeeded are deleted only once every hook of the event has
// succeeded, last first: a chart's hook Job runs under a ServiceAccount and
// RBAC that are hooks of the same event with the same policy (ingress-nginx's
// admission Jobs), which must outlive it. When a hook fails after it was
// created, it is deleted if its policy is hook-failed, and then the hooks of
// the event that succeeded before it whose policy is hook-succeeded, in the
// order they ran. rec, when set, records each run in the release record's
// hooks.
func runHooks(ctx context.Context, c *connection.Client, owner hookRelease, hooks []hook, event release.HookEvent,
	timeout time.Duration, rec *release.Release) error {
	now := hooksOf(hooks, event)
	made := make([]*unstructured.Unstructured, 0, len(now))
	for _, h := range now {
		obj, err := runHook(ctx, c, owner, h, event, timeout, recordedRun(rec, h))
		if err == nil {
			made = append(made, obj)
			continue
		}
		if obj == nil {
			return err // never created: nothing of the event is deleted, as with Helm
		}
		if optimeout.Ran(ctx) != nil {
			// The operation's deadline: no request outlives it, so no
			// hook is deleted; the next apply's run replaces them.
			return err
		}
		if h.has(release.HookFailed) {
			if derr := deleteHook(ctx, c, h, obj, event, "failed", timeout); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		for i, done := range now[:len(made)] {
			if !done.has(release.HookSucceeded) {
				continue
			}
			if derr := deleteHook(ctx, c, done, made[i], event, "succeeded", timeout); derr != nil {
				return errors.Join(err, derr)
			}
		}
		return err
	}
	for i := len(now) - 1; i >= 0; i-- {
		if !now[i].has(release.HookSucceeded) {
			continue
		}
		if err := deleteHook(ctx, c, now[i], made[i], event, "succeeded", timeout); err != nil {
			return err
		}
	}
	return nil
}

// hooksOf are the hooks of event in the order Helm runs them. Where Helm
// would fall back on the order of the chart's template files (one weight,
// name and kind in two namespaces), the key decides.
func hooksOf(hooks []hook, event release.HookEvent) []hook {
	var now []hook
	for _, h := range hooks {
		if slices.Contains(h.events, event) {
			now = append(now, h)
		}
	}
	slices.SortStableFunc(now, func(a, b hook) int {
		return cmp.Or(cmp.Compare(a.weight, b.weight),
			strings.Compare(a.obj.GetName(), b.obj.GetName()),
			objectset.CompareKinds(relutil.InstallOrder, a.obj.GetKind(), b.obj.GetKind()),
			strings.Compare(a.key, b.key))
	})
	return now
}

// runHook runs one hook and returns the object it created, nil when it
// created none.
func runHook(ctx context.Context, c *connection.Client, owner hookRelease, h hook, event release.HookEvent,
	timeout time.Duration, run *release.HookExecution) (*unstructured.Unstructured, error) {
	deadline := time.Now().Add(timeout)
	if h.has(release.HookBeforeHookCreation) {
		if err := owner.removePrevious(ctx, c, h, timeout); err != nil {
			return nil, fmt.Errorf("%s hook %s: removing its previous run: %w", event, h.key, err)
		}
	}
	*run = release.HookExecution{StartedAt: time.Now(), Phase: release.HookPhaseRunning}
	obj := h.obj.DeepCopy()
	mark(obj, helmchart.Release{Name: owner.name, Namespace: owner.namespace})
	applied, err := ssa.Apply(ctx, c, obj, ssa.Options{FieldManager: ssa.FieldManager})
	if err != nil {
		run.CompletedAt, run.Phase = time.Now(), release.HookPhaseFailed
		return nil, fmt.Errorf("%s hook %s failed: %w", event, h.key, err)
	}
	err = awaitHook(ctx, c, applied, time.Until(deadline))
	run.CompletedAt = time.Now()
	if err != nil {
		run.Phase = release.HookPhaseFailed
		return applied, fmt.Errorf("%s hook %s failed: %w", event, h.key, err)
	}
	run.Phase = release.HookPhaseSucceeded
	return applied, nil
}

func (h hook) has(p release.HookDeletePolicy) bool { return slices.Contains(h.policies, p) }

// neverDeleted is the kind of hook Helm's delete policies never delete:
// deleting a CRD deletes every object of its kind.
const neverDeleted = "CustomResourceDefinition"

// deleteHook deletes obj, the object hook h created, by h's policy for
// outcome, and waits until it is gone. The delete is bound to obj's UID, so
// an object of the same name made since is left alone; unlike objects,
// hooks go whatever their helm.sh/resource-policy, as with Helm.
func deleteHook(ctx context.Context, c *connection.Client, h hook, obj *unstructured.Unstructured, event release.HookEvent,
	outcome string, timeout time.Duration) error {
	if h.obj.GetKind() == neverDeleted {
		return nil
	}
	// The identity of what the server made, not of the template: a hook
	// that sets no namespace is made in the release's, and a delete at
	// the template's identity goes to a path that holds no such object.
	if err := objectset.DeleteAndWait(ctx, c, manifest.IdentityOf(obj), obj, time.Now().Add(max(timeout, 10*time.Second))); err != nil {
		return fmt.Errorf("%s hook %s %s but was not deleted: %w", event, h.key, outcome, err)
	}
	return nil
}

// removePrevious deletes what an earlier run of h left, as the policy
// before-hook-creation asks, bound to the UID it read. Helm deletes any
// object of the hook's name; only one of this release's (made) is deleted
// here: another release's, or anyone else's, is left as it is and the hook
// does not run.
func (o hookRelease) removePrevious(ctx context.Context, c *connection.Client, h hook, timeout time.Duration) error {
	if h.obj.GetKind() == neverDeleted {
		return nil
	}
	id := manifest.IdentityOf(h.obj)
	live, err := c.GetMetadata(ctx, id.GVK(), id.Namespace, id.Name)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", id, err)
	}
	if holder, ours := o.made(live, id); !ours {
		return fmt.Errorf("%s exists and is not this release's (it belongs to %s), so it is not deleted; "+
			"delete or rename it, then apply again", id, holder)
	}
	return objectset.DeleteAndWait(ctx, c, id, live, time.Now().Add(timeout))
}

// made reports whether live, the object at a hook's identity id, is this
// release's, and otherwise names its holder. An object with Helm's
// ownership marks is the release's they name. An unmarked one is this
// release's when one of its records holds a run of a hook of that identity
// during which (give or take clockSlack) the object was created.
func (o hookRelease) made(live *unstructured.Unstructured, id manifest.Identity) (string, bool) {
	holder := objectplan.HolderOf(live)
	if holder.ReleaseName != "" || holder.ReleaseNamespace != "" {
		return holder.String(), holder.InRelease(o.namespace, o.name)
	}
	if onlyHelmWrote(live) {
		// Unmarked and written by Helm alone (helm itself writes hooks
		// unmarked, and an uninstall leaves them): a hook's earlier run,
		// which helm would delete too.
		return "", true
	}
	created := live.GetCreationTimestamp().Time
	for _, rec := range o.history {
		for _, rh := range rec.Hooks {
			if ranAround(rh.LastRun, created) && recordedAs(rec, rh, id) {
				return "", true
			}
		}
	}
	return holder.String(), false
}

func ranAround(run release.HookExecution, t time.Time) bool {
	if run.StartedAt.IsZero() {
		return false
	}
	end := run.CompletedAt
	if end.IsZero() {
		end = time.Now() // a run cut short
	}
	return !t.Before(run.StartedAt.Add(-clockSlack)) && !t.After(end.Add(clockSlack))
}

// recordedAs reports whether rh, a hook of rec, is the hook of identity id:
// a hook whose manifest names no namespace runs in the release's.
func recordedAs(rec *release.Release, rh *release.Hook, id manifest.Identity) bool {
	if rh.Kind != id.Kind || rh.Name != id.Name {
		return false
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(rh.Manifest), &head); err != nil {
		return false
	}
	ns := head.Metadata.Namespace
	if ns == "" && id.Namespace != "" {
		ns = rec.Namespace
	}
	return ns == id.Namespace && schema.FromAPIVersionAndKind(head.APIVersion, rh.Kind).Group == id.GVK().Group
}

// awaitHook waits for a Job to complete or a Pod to succeed; other kinds are
// done once applied, as helm takes them.
func awaitHook(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured, timeout time.Duration) error {
	gvk := obj.GroupVersionKind()
	var eval func(*unstructured.Unstructured) waiting.State
	switch {
	case gvk.Group == "batch" && gvk.Kind == "Job":
		eval = jobDone
	case gvk.Group == "" && gvk.Kind == "Pod":
		eval = podDone
	default:
		return nil
	}
	m, err := c.Mapping(gvk)
	if err != nil {
		return err
	}
	res, err := waiting.Until(ctx, c.Resource(m, obj.GetNamespace()), obj.GetName(), eval,
		waiting.Options{Timeout: max(timeout, time.Second)})
	if err == nil {
		return nil
	}
	if op := optimeout.Of(err); op != nil {
		return fmt.Errorf("%s: %s; the hook is left as it is", op.While(fmt.Sprintf("waiting for %s %s/%s to finish",
			gvk.Kind, obj.GetNamespace(), obj.GetName())), res.State.Summary)
	}
	why := res.State.Summary
	if w := waiting.LastWarning(ctx, c.Dynamic, res.Object); w != "" {
		why += "; the " + gvk.Kind + "'s last warning: " + w
	}
	return fmt.Errorf("%s%s", why, podMessages(ctx, c, res.Object))
}

// jobDone judges a Job by its Complete and Failed conditions, as helm does:
// kstatus calls a running Job current, which for a hook is too early.
func jobDone(obj *unstructured.Unstructured) waiting.State {
	if obj == nil {
		return waiting.State{Summary: "does not exist yet"}
	}
	var last string
	for _, c := range waiting.Conditions(obj) {
		switch {
		case c.Type == "Complete" && c.Status == "True":
			return waiting.State{Met: true, Summary: "complete"}
		case c.Type == "Failed" && c.Status == "True":
			return waiting.State{Stuck: true, Summary: "failed: " + c.String()}
		}
		last = c.String()
	}
	active, _, _ := unstructured.NestedInt64(obj.Object, "status", "active")
	failed, _, _ := unstructured.NestedInt64(obj.Object, "status", "failed")
	summary := fmt.Sprintf("running (active pods: %d, failed: %d)", active, failed)
	if last != "" {
		summary += "; last condition " + last
	}
	return waiting.State{Summary: summary}
}

func podDone(obj *unstructured.Unstructured) waiting.State {
	if obj == nil {
		return waiting.State{Summary: "does not exist yet"}
	}
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	switch phase {
	case "Succeeded":
		return waiting.State{Met: true, Summary: "succeeded"}
	case "Failed":
		return waiting.State{Stuck: true, Summary: "failed"}
	}
	return waiting.State{Summary: "phase " + cmp.Or(phase, "Pending")}
}

// podMessages say, pod by pod, why a hook's pods (the pod itself, or a
// Job's) did not succeed, in the words k8sconnect_wait uses: each
// container's state, exit code and termination message.
func podMessages(ctx context.Context, c *connection.Client, obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	pods := []unstructured.Unstructured{*obj}
	if obj.GetKind() != "Pod" {
		pods, _ = waiting.Pods(ctx, c.Dynamic, obj)
	}
	var lines []string
	for _, p := range pods {
		if problem, ok := waiting.PodProblem(&p); ok {
			lines = append(lines, fmt.Sprintf("pod %s: %s", p.GetName(), problem))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(lines, "\n")
}

// onlyHelmWrote reports an object whose every field manager is Helm's
// (helmManager) or k8sconnect's.
func onlyHelmWrote(live *unstructured.Unstructured) bool {
	entries := live.GetManagedFields()
	for _, e := range entries {
		if !helmManager(e.Manager) && e.Manager != ssa.FieldManager {
			return false
		}
	}
	return len(entries) > 0
}
