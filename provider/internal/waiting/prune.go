package waiting

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// StatusValue is what a field wait exposes (ADR-008: you get only what you wait
// for): the object pruned to the waited path, rooted at status when the path
// starts there, so `status.loadBalancer.ingress[0].hostname` reads back as
// status.loadBalancer.ingress[0].hostname in configuration. A path outside
// status keeps its root: `spec.clusterIP` gives {spec = {clusterIP = ...}}.
//
// found is false when the path is absent or its value empty.
func StatusValue(obj map[string]any, p objectpath.Path) (v any, found bool) {
	if leaf, ok := p.Get(obj); !ok || IsEmpty(leaf) {
		return nil, false
	}
	pruned, ok := prune(obj, p)
	if !ok {
		return nil, false
	}
	if p[0].Field != nil && *p[0].Field == "status" {
		m, _ := pruned.(map[string]any) // pruned from an object: a map
		return m["status"], true
	}
	return pruned, true
}

// prune keeps only the branch of cur that leads along p. List elements keep
// their position (earlier ones become null) so an index in the path is the same
// index in the result; an element chosen by key keeps its key fields so it can
// still be recognised.
func prune(cur any, p objectpath.Path) (any, bool) {
	if len(p) == 0 {
		return runtime.DeepCopyJSONValue(cur), true
	}
	s := p[0]
	if s.Field != nil {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[*s.Field]
		if !ok {
			return nil, false
		}
		sub, ok := prune(v, p[1:])
		if !ok {
			return nil, false
		}
		return map[string]any{*s.Field: sub}, true
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, false
	}
	i := elementIndex(list, s)
	if i < 0 {
		return nil, false
	}
	sub, ok := prune(list[i], p[1:])
	if !ok {
		return nil, false
	}
	switch {
	case s.Index != nil:
		out := make([]any, i+1)
		out[i] = sub
		return out, true
	case s.Keys != nil:
		if m, isMap := sub.(map[string]any); isMap {
			elem, _ := list[i].(map[string]any) // selected by keys: a map
			for _, kv := range s.Keys {
				m[kv.Name] = runtime.DeepCopyJSONValue(elem[kv.Name])
			}
		}
	}
	return []any{sub}, true
}

// elementIndex finds the element a list segment selects, as objectpath does.
func elementIndex(list []any, s objectpath.Segment) int {
	switch {
	case s.Index != nil:
		if *s.Index < len(list) {
			return *s.Index
		}
	case s.Value != nil:
		for i, e := range list {
			if objectpath.Render(e) == *s.Value {
				return i
			}
		}
	case s.Keys != nil:
	elements:
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			for _, kv := range s.Keys {
				v, ok := m[kv.Name]
				if !ok || objectpath.Render(v) != kv.Value {
					continue elements
				}
			}
			return i
		}
	}
	return -1
}
