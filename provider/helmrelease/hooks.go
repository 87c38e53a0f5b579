package helmrelease

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	release "helm.sh/helm/v4/pkg/release/v1"
	relutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
	"github.com/k8sconnect/k8sconnect/provider/internal/waiting"
)

// runHooks runs the hooks of event as helm does: by weight, then kind in
// install order, then name; each applied and awaited (a Job until it
// completes, a Pod until it succeeds) before the next. The first failure
// stops the run. Those whose policy is hook-succeeded are deleted only once
// every hook of the event has succeeded, last first: a chart's hook Job runs
// under a ServiceAccount and RBAC that are hooks of the same event with the
// same policy (ingress-nginx's admission Jobs), which must outlive it. rec,
// when set, records each run in the release record's hooks.
func runHooks(ctx context.Context, c *connection.Client, hooks []hook, event release.HookEvent, timeout time.Duration, rec *release.Release) error {
	var now []hook
	for _, h := range hooks {
		if slices.Contains(h.events, event) {
			now = append(now, h)
		}
	}
	slices.SortStableFunc(now, func(a, b hook) int {
		return cmp.Or(cmp.Compare(a.weight, b.weight),
			cmp.Compare(kindRank(relutil.InstallOrder, a.obj.GetKind()), kindRank(relutil.InstallOrder, b.obj.GetKind())),
			cmp.Compare(a.obj.GetName(), b.obj.GetName()))
	})
	for _, h := range now {
		run := recordedRun(rec, h)
		if err := runHook(ctx, c, h, event, timeout, run); err != nil {
			return err
		}
	}
	for i := len(now) - 1; i >= 0; i-- {
		h := now[i]
		if !h.has(release.HookSucceeded) {
			continue
		}
		if err := deleteObjects(ctx, c, []manifest.Identity{manifest.IdentityOf(h.obj)}, max(timeout, 10*time.Second)); err != nil {
			return fmt.Errorf("%s hook %s succeeded but was not deleted: %w", event, h.key, err)
		}
	}
	return nil
}

func runHook(ctx context.Context, c *connection.Client, h hook, event release.HookEvent, timeout time.Duration, run *release.HookExecution) error {
	id := manifest.IdentityOf(h.obj)
	deadline := time.Now().Add(timeout)
	if h.has(release.HookBeforeHookCreation) {
		if err := deleteObjects(ctx, c, []manifest.Identity{id}, timeout); err != nil {
			return fmt.Errorf("%s hook %s: removing its previous run: %w", event, h.key, err)
		}
	}
	*run = release.HookExecution{StartedAt: time.Now(), Phase: release.HookPhaseRunning}
	applied, err := ssa.Apply(ctx, c, h.obj.DeepCopy(), ssa.Options{FieldManager: ssa.FieldManager})
	if err == nil {
		err = awaitHook(ctx, c, applied, time.Until(deadline))
	}
	run.CompletedAt = time.Now()
	if err != nil {
		run.Phase = release.HookPhaseFailed
		if h.has(release.HookFailed) {
			_ = deleteObjects(ctx, c, []manifest.Identity{id}, time.Until(deadline))
		}
		return fmt.Errorf("%s hook %s failed: %w", event, h.key, err)
	}
	run.Phase = release.HookPhaseSucceeded
	return nil
}

func (h hook) has(p release.HookDeletePolicy) bool { return slices.Contains(h.policies, p) }

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
