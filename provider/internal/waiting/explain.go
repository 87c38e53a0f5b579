package waiting

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// maxPodsShown keeps a 500-replica Deployment's error readable: the first few
// pods usually share one reason.
const maxPodsShown = 10

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// workloadKinds run pods chosen by spec.selector, so a failed wait on them can
// say which pods are holding things up.
var workloadKinds = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "batch", Kind: "Job"}:        true,
}

// Pods lists the pods a workload selects; other kinds have none.
func Pods(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	if obj == nil || !workloadKinds[obj.GroupVersionKind().GroupKind()] {
		return nil, nil
	}
	raw, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found {
		return nil, nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("reading spec.selector: %w", err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("reading spec.selector: %w", err)
	}
	list, err := dyn.Resource(podsResource).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

var eventsResource = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// LastWarning is the latest Warning event about obj ("" when there is none or
// events cannot be read): what a controller could not do for it, such as a
// Job whose pods cannot be created (FailedCreate: its ServiceAccount is
// missing), which nothing else in the object says.
func LastWarning(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) string {
	if obj == nil || obj.GetUID() == "" {
		return ""
	}
	list, err := dyn.Resource(eventsResource).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(obj.GetUID()) + ",type=Warning"})
	if err != nil || len(list.Items) == 0 {
		return ""
	}
	latest, when := list.Items[0], ""
	for _, e := range list.Items {
		t, _, _ := unstructured.NestedString(e.Object, "lastTimestamp")
		if t == "" {
			t = e.GetCreationTimestamp().UTC().Format(time.RFC3339)
		}
		if t >= when {
			latest, when = e, t
		}
	}
	reason, _, _ := unstructured.NestedString(latest.Object, "reason")
	message, _, _ := unstructured.NestedString(latest.Object, "message")
	return reason + ": " + message
}

// Explain is the body of a failed wait's error: where the object stands, in the
// terms of what was waited for, and which pods are holding it up.
func Explain(spec Spec, res Result, pods []unstructured.Unstructured) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Now: %s.\n", res.State.Summary)
	obj := res.Object
	if obj == nil {
		return b.String()
	}
	switch {
	case spec.Field != nil:
		b.WriteString(currentValues([]objectpath.Path{spec.Field}, obj, spec.Redactor))
	case len(spec.FieldValues) > 0:
		paths := make([]objectpath.Path, len(spec.FieldValues))
		for i, fv := range spec.FieldValues {
			paths[i] = fv.Path
		}
		b.WriteString(currentValues(paths, obj, spec.Redactor))
	}
	if line := counts(obj); line != "" {
		fmt.Fprintf(&b, "%s\n", line)
	}
	if conds := Conditions(obj); len(conds) > 0 {
		b.WriteString("Conditions:\n")
		for _, c := range conds {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	} else if spec.Condition != "" {
		b.WriteString("Conditions: none reported.\n")
	}
	b.WriteString(podLines(pods))
	return b.String()
}

func currentValues(paths []objectpath.Path, obj *unstructured.Unstructured, red sensitive.Redactor) string {
	var b strings.Builder
	b.WriteString("Current value:\n")
	for _, p := range paths {
		v, ok := p.Get(obj.Object)
		if !ok {
			fmt.Fprintf(&b, "  %s: not set\n", p)
			continue
		}
		fmt.Fprintf(&b, "  %s = %s\n", p, clip(red.Render(obj.Object, p, v)))
	}
	return b.String()
}

// counts is the replica or pod count line of workload kinds.
func counts(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	gen := fmt.Sprintf("observed generation %d of %d", num(obj, "status", "observedGeneration"), obj.GetGeneration())
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		return fmt.Sprintf("Replicas: %d desired, %d current, %d updated, %d ready, %d available (%s).",
			desiredReplicas(obj), num(obj, "status", "replicas"), num(obj, "status", "updatedReplicas"),
			num(obj, "status", "readyReplicas"), num(obj, "status", "availableReplicas"), gen)
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		cur, _, _ := unstructured.NestedString(obj.Object, "status", "currentRevision")
		upd, _, _ := unstructured.NestedString(obj.Object, "status", "updateRevision")
		return fmt.Sprintf("Replicas: %d desired, %d current, %d updated, %d ready, %d available; revision %s, updating to %s (%s).",
			desiredReplicas(obj), num(obj, "status", "replicas"), num(obj, "status", "updatedReplicas"),
			num(obj, "status", "readyReplicas"), num(obj, "status", "availableReplicas"), orNone(cur), orNone(upd), gen)
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		return fmt.Sprintf("Pods: %d desired, %d scheduled, %d updated, %d ready, %d available, %d misscheduled (%s).",
			num(obj, "status", "desiredNumberScheduled"), num(obj, "status", "currentNumberScheduled"),
			num(obj, "status", "updatedNumberScheduled"), num(obj, "status", "numberReady"),
			num(obj, "status", "numberAvailable"), num(obj, "status", "numberMisscheduled"), gen)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return fmt.Sprintf("Pods: %d active, %d ready, %d succeeded, %d failed.",
			num(obj, "status", "active"), num(obj, "status", "ready"), num(obj, "status", "succeeded"), num(obj, "status", "failed"))
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func podLines(pods []unstructured.Unstructured) string {
	type problem struct{ name, why string }
	var problems []problem
	for i := range pods {
		if why, stuck := PodProblem(&pods[i]); stuck {
			problems = append(problems, problem{pods[i].GetName(), why})
		}
	}
	if len(problems) == 0 {
		return ""
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].name < problems[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "Pods not ready (%d of %d):\n", len(problems), len(pods))
	for i, p := range problems {
		if i == maxPodsShown {
			fmt.Fprintf(&b, "  ... and %d more\n", len(problems)-maxPodsShown)
			break
		}
		fmt.Fprintf(&b, "  %s: %s\n", p.name, p.why)
	}
	return b.String()
}

// PodProblem says why a pod is not ready, or false if it is ready or finished
// successfully.
func PodProblem(pod *unstructured.Unstructured) (string, bool) {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	conds := Conditions(pod)
	if phase == "Succeeded" {
		return "", false
	}
	if ready := findCondition(conds, "Ready"); phase == "Running" && ready != nil && ready.Status == "True" {
		return "", false
	}
	if phase == "" {
		phase = "Unknown"
	}
	parts := []string{phase}
	if pod.GetDeletionTimestamp() != nil {
		parts = append(parts, "terminating")
	}
	if reason, _, _ := unstructured.NestedString(pod.Object, "status", "reason"); reason != "" {
		msg, _, _ := unstructured.NestedString(pod.Object, "status", "message")
		parts = append(parts, joinReason(reason, msg))
	}
	node, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	switch {
	case phase == "Pending" && node == "" && findCondition(conds, "PodScheduled") == nil:
		parts = append(parts, "not scheduled yet")
	case phase == "Pending" && node != "" && len(statuses) == 0:
		// The kubelet has not reported anything: it is slow, or not there.
		parts = append(parts, fmt.Sprintf("scheduled to %s, no container started yet", node))
	}
	for _, c := range conds {
		// ContainersReady repeats Ready; container details follow below.
		if c.Status != "True" && c.Type != "ContainersReady" && (c.Reason != "" || c.Message != "") {
			parts = append(parts, c.String())
		}
	}
	for _, key := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", key)
		for _, s := range statuses {
			if line := containerProblem(s); line != "" {
				parts = append(parts, line)
			}
		}
	}
	return strings.Join(parts, "; "), true
}

func containerProblem(raw any) string {
	cs, ok := raw.(map[string]any)
	if !ok {
		return ""
	}
	name := str(cs["name"])
	if w, ok, _ := unstructured.NestedMap(cs, "state", "waiting"); ok {
		return fmt.Sprintf("container %s waiting: %s", name, joinReason(str(w["reason"]), str(w["message"])))
	}
	if t, ok, _ := unstructured.NestedMap(cs, "state", "terminated"); ok {
		code, _ := toInt64(t["exitCode"])
		return fmt.Sprintf("container %s terminated: %s (exit code %d)", name, joinReason(str(t["reason"]), str(t["message"])), code)
	}
	if ready, _ := cs["ready"].(bool); !ready {
		restarts, _ := toInt64(cs["restartCount"])
		if restarts > 0 {
			return fmt.Sprintf("container %s not ready, restarted %d %s", name, restarts, plural(restarts, "time", "times"))
		}
		return fmt.Sprintf("container %s not ready", name)
	}
	return ""
}

func joinReason(reason, message string) string {
	switch {
	case reason == "" && message == "":
		return "no reason given"
	case message == "":
		return reason
	case reason == "":
		return clip(oneLine(message))
	}
	return reason + ": " + clip(oneLine(message))
}
