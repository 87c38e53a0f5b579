package waiting

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition is one entry of status.conditions.
type Condition struct {
	Type, Status, Reason, Message string
	// ObservedGeneration is 0 when the controller does not report it.
	ObservedGeneration int64
}

// Conditions reads status.conditions, skipping malformed entries.
func Conditions(obj *unstructured.Unstructured) []Condition {
	list, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]Condition, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{
			Type:    str(m["type"]),
			Status:  str(m["status"]),
			Reason:  str(m["reason"]),
			Message: str(m["message"]),
		}
		c.ObservedGeneration, _ = toInt64(m["observedGeneration"])
		if c.Type != "" {
			out = append(out, c)
		}
	}
	return out
}

// String is the condition as one line: "Available=False MinimumReplicasUnavailable: ...".
func (c Condition) String() string {
	s := c.Type + "=" + c.Status
	if c.Reason != "" {
		s += " " + c.Reason
	}
	if c.Message != "" {
		s += ": " + oneLine(c.Message)
	}
	return s
}

// findCondition matches the type exactly, else ignoring case as kubectl wait does,
// so "ready" finds Ready.
func findCondition(conds []Condition, typ string) *Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	for i := range conds {
		if strings.EqualFold(conds[i].Type, typ) {
			return &conds[i]
		}
	}
	return nil
}

func conditionState(obj *unstructured.Unstructured, typ string) State {
	conds := Conditions(obj)
	if st, stuck := jobFinishedOtherwise(obj, conds, typ); stuck {
		return st
	}
	c := findCondition(conds, typ)
	if c == nil {
		return State{Summary: fmt.Sprintf("condition %s is not reported yet", typ)}
	}
	// A condition written for an older spec says nothing about the current one.
	if gen := obj.GetGeneration(); c.ObservedGeneration != 0 && c.ObservedGeneration < gen {
		return State{Summary: fmt.Sprintf("condition %s is %s for generation %d; the object is at generation %d",
			c.Type, c.Status, c.ObservedGeneration, gen)}
	}
	if c.Status == "True" {
		return State{Met: true, Summary: "condition " + c.String()}
	}
	return State{Summary: "condition " + c.String()}
}

// jobFinishedOtherwise: a Job that has failed will never complete (and one that
// completed will never fail), so waiting for the other outcome is pointless.
func jobFinishedOtherwise(obj *unstructured.Unstructured, conds []Condition, typ string) (State, bool) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != "batch" || gvk.Kind != "Job" {
		return State{}, false
	}
	var opposite string
	switch {
	case strings.EqualFold(typ, "Complete"), strings.EqualFold(typ, "SuccessCriteriaMet"):
		opposite = "Failed"
	case strings.EqualFold(typ, "Failed"), strings.EqualFold(typ, "FailureTarget"):
		opposite = "Complete"
	default:
		return State{}, false
	}
	c := findCondition(conds, opposite)
	if c == nil || c.Status != "True" {
		return State{}, false
	}
	return State{Stuck: true, Summary: fmt.Sprintf("the Job has finished with condition %s, so condition %s will never be True", c, typ)}, true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
