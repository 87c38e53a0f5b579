package objectpath

import "k8s.io/apimachinery/pkg/runtime"

// Get returns the value at p in an unstructured object.
func (p Path) Get(obj map[string]any) (any, bool) {
	var cur any = obj
	for _, s := range p {
		next, ok := step(cur, s)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// Replace sets the value at p, which must already be there, to v and reports
// whether it was there.
func (p Path) Replace(obj map[string]any, v any) bool {
	m, list, i, ok := p.holder(obj)
	switch {
	case !ok:
		return false
	case m != nil:
		m[*p[len(p)-1].Field] = v
	default:
		list[i] = v // the list is shared with its parent: this writes through
	}
	return true
}

// holder finds what holds the value at p: the map and its key (the last
// segment's field), or the list and the index. ok is false when p names
// nothing in obj.
func (p Path) holder(obj map[string]any) (m map[string]any, list []any, i int, ok bool) {
	if len(p) == 0 {
		return nil, nil, 0, false
	}
	parent, found := p[:len(p)-1].Get(obj)
	if !found {
		return nil, nil, 0, false
	}
	last := p[len(p)-1]
	if last.Field != nil {
		m, isMap := parent.(map[string]any)
		if !isMap {
			return nil, nil, 0, false
		}
		_, had := m[*last.Field]
		return m, nil, 0, had
	}
	list, isList := parent.([]any)
	if !isList {
		return nil, nil, 0, false
	}
	i = indexIn(list, last)
	return nil, list, i, i >= 0
}

// Remove deletes the value at p from obj and reports whether it was there. A
// list element selected by key, value or index is removed from its list.
func (p Path) Remove(obj map[string]any) bool {
	m, list, i, ok := p.holder(obj)
	switch {
	case !ok:
		return false
	case m != nil:
		delete(m, *p[len(p)-1].Field)
		return true
	}
	// Write the shortened list back into the parent's parent.
	grand, _ := p[:len(p)-2].Get(obj)
	via := p[len(p)-2]
	shortened := append(append([]any{}, list[:i]...), list[i+1:]...)
	// grand holds list (Get found it through via), so it is a map for a
	// field segment and a list otherwise.
	switch g := grand.(type) {
	case map[string]any:
		g[*via.Field] = shortened
	case []any:
		g[indexIn(g, via)] = shortened
	}
	return true
}

func step(cur any, s Segment) (any, bool) {
	if s.Field != nil {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := m[*s.Field]
		return v, ok
	}
	list, ok := cur.([]any)
	if !ok {
		return nil, false
	}
	i := indexIn(list, s)
	if i < 0 {
		return nil, false
	}
	return list[i], true
}

// indexIn finds the list element a segment selects, or -1.
func indexIn(list []any, s Segment) int {
	switch {
	case s.Index != nil:
		if *s.Index < len(list) {
			return *s.Index
		}
	case s.Value != nil:
		for i, e := range list {
			if Render(e) == *s.Value {
				return i
			}
		}
	case s.Keys != nil:
		for i, e := range list {
			m, ok := e.(map[string]any)
			if ok && keysMatch(m, s.Keys) {
				return i
			}
		}
	}
	return -1
}

func keysMatch(m map[string]any, keys []KeyValue) bool {
	for _, kv := range keys {
		v, ok := m[kv.Name]
		if !ok || Render(v) != kv.Value {
			return false
		}
	}
	return true
}

// Prune is obj with only the branch that leads along p, copied: a wait shows
// what it waited for and nothing else. List elements keep their position
// (earlier ones become null) so an index in the path is the same index in the
// result; an element chosen by key keeps its key fields so it can still be
// recognised.
func (p Path) Prune(obj map[string]any) (any, bool) {
	return prune(obj, p)
}

func prune(cur any, p Path) (any, bool) {
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
	i := indexIn(list, s)
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

// Expand is every concrete path of obj that p names: p itself when it has no
// [*], else one path per element each [*] stands for (by index), among those
// obj holds.
func (p Path) Expand(obj map[string]any) []Path {
	if !p.Selects() {
		return []Path{p}
	}
	var out []Path
	var walk func(cur any, done Path, rest Path)
	walk = func(cur any, done Path, rest Path) {
		if len(rest) == 0 {
			out = append(out, append(Path(nil), done...))
			return
		}
		s := rest[0]
		if !s.Every {
			next, ok := step(cur, s)
			if ok {
				walk(next, append(done, s), rest[1:])
			}
			return
		}
		list, _ := cur.([]any)
		for i := range list {
			walk(list[i], append(done, Segment{Index: &i}), rest[1:])
		}
	}
	walk(obj, nil, p)
	return out
}

// Set writes v at p in obj, making the maps on the way that are missing. A
// list element on the way must already be there (a path cannot say where a
// new one would go); Set reports whether it wrote.
func (p Path) Set(obj map[string]any, v any) bool {
	if len(p) == 0 {
		return false
	}
	var cur any = obj
	for i, s := range p[:len(p)-1] {
		next, ok := step(cur, s)
		if !ok {
			m, isMap := cur.(map[string]any)
			if s.Field == nil || !isMap {
				return false
			}
			if p[i+1].Field == nil {
				return false // the next step selects a list element that is not there
			}
			next = map[string]any{}
			m[*s.Field] = next
		}
		cur = next
	}
	last := p[len(p)-1]
	switch c := cur.(type) {
	case map[string]any:
		if last.Field == nil {
			return false
		}
		c[*last.Field] = v
		return true
	case []any:
		i := indexIn(c, last)
		if i < 0 {
			return false
		}
		c[i] = v
		return true
	}
	return false
}

// Identifies reports a path to the object's identity (apiVersion, kind,
// metadata.name or metadata.namespace), which no field list may leave out.
func (p Path) Identifies() bool {
	if len(p) == 0 || p[0].Field == nil {
		return false
	}
	switch *p[0].Field {
	case "apiVersion", "kind":
		return true
	case "metadata":
		return len(p) > 1 && p[1].Field != nil && (*p[1].Field == "name" || *p[1].Field == "namespace")
	}
	return false
}

// RemoveEvery removes from obj every field p matches ([*] and selectors
// may match several).
func (p Path) RemoveEvery(obj map[string]any) {
	// Last first: removing a list element must not shift the indices of
	// the matches still to remove.
	all := p.Expand(obj)
	for j := len(all) - 1; j >= 0; j-- {
		all[j].Remove(obj)
	}
}
