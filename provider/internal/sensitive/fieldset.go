package sensitive

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// RedactSet is s, a managedFields field set of obj, with every selector that
// Name would hash hashed the same way. Resources remember the fields they own
// between runs in private state; a set of API keys under sensitive_fields
// would otherwise be written there in clear. ResolveSet undoes it against the
// live object.
func (r Redactor) RedactSet(obj map[string]any, s *fieldpath.Set) *fieldpath.Set {
	if s == nil || r.all || r.key == "" {
		return s
	}
	out := fieldpath.NewSet()
	s.Iterate(func(fp fieldpath.Path) {
		p := objectpath.FromFieldPath(fp)
		redacted := fp.Copy()
		for i, e := range fp {
			if (e.Value != nil || e.Key != nil) && r.Sensitive(obj, p[:i+1]) {
				redacted[i] = element(r.hashSegment(p[:i], p[i]))
			}
		}
		out.Insert(redacted)
	})
	return out
}

// ResolveSet is the inverse of RedactSet: each hashed selector becomes the
// element of obj it hashes to. A path whose element obj no longer holds is
// dropped: it names nothing to project, and what it named is still in the
// recorded projection, so the removal shows as drift.
func (r Redactor) ResolveSet(obj map[string]any, s *fieldpath.Set) *fieldpath.Set {
	if s == nil || r.all || r.key == "" {
		return s
	}
	out := fieldpath.NewSet()
	s.Iterate(func(fp fieldpath.Path) {
		resolved := fp.Copy()
		for i := range fp {
			seg := objectpath.FromFieldPath(fp[i : i+1])[0]
			if !redactedSelector(seg) {
				continue
			}
			parent := objectpath.FromFieldPath(resolved[:i])
			found, ok := r.match(obj, parent, seg)
			if !ok {
				return
			}
			resolved[i] = found
		}
		out.Insert(resolved)
	})
	return out
}

// match finds the element of the list at parent whose hashed selector is seg.
func (r Redactor) match(obj map[string]any, parent objectpath.Path, seg objectpath.Segment) (fieldpath.PathElement, bool) {
	list, _ := parent.Get(obj)
	elems, _ := list.([]any)
	want := objectpath.Path{seg}.String()
	for _, e := range elems {
		found, ok := selectorOf(e, seg)
		if !ok || (objectpath.Path{r.hashSegment(parent, found)}).String() != want {
			continue
		}
		if seg.Value != nil {
			v := value.NewValueInterface(e)
			return fieldpath.PathElement{Value: &v}, true
		}
		m, _ := e.(map[string]any) // selectorOf matched keys, so e is a map
		keys := make(value.FieldList, len(seg.Keys))
		for j, kv := range seg.Keys {
			keys[j] = value.Field{Name: kv.Name, Value: value.NewValueInterface(m[kv.Name])}
		}
		return fieldpath.PathElement{Key: &keys}, true
	}
	return fieldpath.PathElement{}, false
}

// element is the field-set form of a hashed selector segment.
func element(s objectpath.Segment) fieldpath.PathElement {
	if s.Value != nil {
		v := value.NewValueInterface(*s.Value)
		return fieldpath.PathElement{Value: &v}
	}
	keys := make(value.FieldList, len(s.Keys))
	for j, kv := range s.Keys {
		keys[j] = value.Field{Name: kv.Name, Value: value.NewValueInterface(kv.Value)}
	}
	return fieldpath.PathElement{Key: &keys}
}
