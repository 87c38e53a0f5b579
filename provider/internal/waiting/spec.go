// Package waiting decides whether a Kubernetes object has reached the state a
// user asked for, waits for it with a watch (falling back to polling), and
// explains, when time runs out, why it has not.
//
// It knows nothing of Terraform: k8sconnect_wait turns its schema into a Spec,
// passes Spec.Evaluate to Until, and turns a TimeoutError into a diagnostic with
// Explain. The evaluation and the explanation are pure functions of the
// object's content, so they are tested without a cluster.
package waiting

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Spec is what to wait for; exactly one mode is set.
type Spec struct {
	// Field must exist and hold a non-empty value.
	Field objectpath.Path
	// FieldValues must each hold their value, compared in objectpath.Render form
	// so that "3", "true" and "Bound" are written the same way in configuration.
	FieldValues []FieldValue
	// Condition is a condition type that must be True.
	Condition string
	// Rollout: a Deployment, StatefulSet or DaemonSet has finished rolling out.
	Rollout bool
	// Ready: any kind is ready by the community's status conventions (kstatus).
	Ready bool
	// Redactor renders the waited values in summaries and explanations, so a
	// wait on a Secret's data never prints the value; APIVersion and Kind name
	// the waited object's kind for Describe, which has no object at hand.
	Redactor         sensitive.Redactor
	APIVersion, Kind string
}

// FieldValue is one expected value of a field_value wait.
type FieldValue struct {
	Path objectpath.Path
	Want string
}

// NewFieldValues parses a field_value map, sorted by path so that summaries and
// errors come out in the same order on every run.
func NewFieldValues(m map[string]string) ([]FieldValue, error) {
	out := make([]FieldValue, 0, len(m))
	for raw, want := range m {
		p, err := objectpath.ParseOne(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, FieldValue{Path: p, Want: want})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path.String() < out[j].Path.String() })
	return out, nil
}

// Describe says what is waited for, for messages: "condition Complete".
func (s Spec) Describe() string {
	switch {
	case s.Field != nil:
		return "field " + s.Field.String()
	case len(s.FieldValues) > 0:
		parts := make([]string, len(s.FieldValues))
		kind := map[string]any{"apiVersion": s.APIVersion, "kind": s.Kind}
		for i, fv := range s.FieldValues {
			if s.Redactor.Sensitive(kind, fv.Path) {
				parts[i] = fmt.Sprintf("%s = (the wanted value, sensitive)", fv.Path)
				continue
			}
			parts[i] = fmt.Sprintf("%s = %q", fv.Path, fv.Want)
		}
		return strings.Join(parts, ", ")
	case s.Condition != "":
		return "condition " + s.Condition
	case s.Rollout:
		return "rollout"
	case s.Ready:
		return "ready"
	}
	return "nothing"
}

// State is where an object stands against a Spec.
type State struct {
	Met bool
	// Summary is one line for progress and errors, such as "2/3 replicas ready".
	Summary string
	// Stuck means the wait can no longer succeed without someone changing the
	// object (a failed Job, a Deployment past its progress deadline): waiting on
	// would only burn the rest of the timeout.
	Stuck bool
}

// Evaluate judges obj, which is nil when the object does not exist.
func (s Spec) Evaluate(obj *unstructured.Unstructured) State {
	if obj == nil {
		return State{Summary: "does not exist yet"}
	}
	var st State
	switch {
	case s.Field != nil:
		st = fieldState(obj.Object, s.Field, s.Redactor)
	case len(s.FieldValues) > 0:
		st = fieldValuesState(obj.Object, s.FieldValues, s.Redactor)
	case s.Condition != "":
		st = conditionState(obj, s.Condition)
	case s.Rollout:
		st = rolloutState(obj)
	case s.Ready:
		st = readyState(obj)
	default:
		return State{Summary: "nothing to wait for", Stuck: true}
	}
	if !st.Met && obj.GetDeletionTimestamp() != nil {
		st.Summary += " (the object is being deleted)"
	}
	return st
}

func fieldState(obj map[string]any, p objectpath.Path, red sensitive.Redactor) State {
	v, ok := p.Get(obj)
	switch {
	case !ok || v == nil:
		return State{Summary: p.String() + " is not set"}
	case IsEmpty(v):
		return State{Summary: p.String() + " is empty"}
	}
	return State{Met: true, Summary: p.String() + " = " + clip(red.Render(obj, p, v))}
}

// IsEmpty: "", {} and [] count as not there yet, since controllers commonly
// create the parent before filling it in (status.loadBalancer: {}).
func IsEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func fieldValuesState(obj map[string]any, fvs []FieldValue, red sensitive.Redactor) State {
	for _, fv := range fvs {
		hide := red.Sensitive(obj, fv.Path)
		v, ok := fv.Path.Get(obj)
		if !ok || v == nil {
			if hide {
				return State{Summary: fmt.Sprintf("%s is not set", fv.Path)}
			}
			return State{Summary: fmt.Sprintf("%s is not set, want %q", fv.Path, fv.Want)}
		}
		if got := objectpath.Render(v); got != fv.Want {
			if hide {
				return State{Summary: fmt.Sprintf("%s does not hold the wanted value (sensitive: values not shown)", fv.Path)}
			}
			return State{Summary: fmt.Sprintf("%s is %q, want %q", fv.Path, clip(got), fv.Want)}
		}
	}
	parts := make([]string, len(fvs))
	for i, fv := range fvs {
		if red.Sensitive(obj, fv.Path) {
			parts[i] = fmt.Sprintf("%s holds the wanted value (sensitive)", fv.Path)
			continue
		}
		parts[i] = fmt.Sprintf("%s = %q", fv.Path, fv.Want)
	}
	return State{Met: true, Summary: strings.Join(parts, ", ")}
}

// clip keeps values that land in one-line summaries readable.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
