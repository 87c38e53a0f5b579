package merge

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// strategic handles what a strategic-merge patch means and structured-merge-diff
// (Server-Side Apply's engine) does not have, so that SMD can merge the rest:
//
//   - the directives $patch (merge, replace, delete), $retainKeys and
//     $deleteFromPrimitiveList/<field>, and $setElementOrder/<field>, which is
//     accepted and ignored. SSA has no directives: the server refuses a patch
//     that has one ("field not declared in schema").
//   - a null, which deletes its field. SSA keeps a null as a value, which the
//     server then decodes as the field's zero value (a label set to null
//     becomes "") or refuses (a custom resource's field must have its type).
//   - patch strategy retainKeys (volumes, Deployment.spec.strategy): the
//     object keeps only the fields the patch gives it. schemaconv drops patch
//     strategies, and SSA removes a field only when the applier applied it
//     before and no other manager owns it; when another manager owns the old
//     member of such a union, the server refuses the result (two volume
//     sources), so retainKeys predicts the only result the server accepts.
//
// A walk over the patch returns it without directives and nulls, for SMD to
// merge, and collects in remove what they take out of live, for SMD's
// RemoveItems before the merge. The walk also checks the patch's shape
// against the schema, so a mistake is reported at its path in objectpath
// notation.
type strategic struct {
	t *Type
	// forMerge cleans the patch for Merge rather than for Paths. A list-map
	// key an element leaves out is then written in with its schema default,
	// as the API server's defaulting does after the merge (a port without
	// protocol gets protocol TCP), so the element can be found by its full
	// key; and a set that $deleteFromPrimitiveList may empty is given as an
	// empty list, because RemoveItems leaves a null where it takes out a
	// list's last value. Paths wants neither: a patch does not set the fields
	// it leaves out, and managedFields does not record them.
	forMerge bool
	remove   *fieldpath.Set
}

func newStrategic(t *Type, forMerge bool) strategic {
	return strategic{t: t, forMerge: forMerge, remove: fieldpath.NewSet()}
}

func (s strategic) errorf(p fieldpath.Path, format string, args ...any) error {
	where := objectpath.FromFieldPath(p).String()
	if where == "" {
		where = "the object"
	}
	return fmt.Errorf("%s %s: %s", s.t.gvk.Kind, where, fmt.Sprintf(format, args...))
}

// removeFromLive asks for the live value at p to go before the merge. Inside
// an atomic value nothing is asked: SMD replaces it whole, and RemoveItems
// would take all of it out.
func (s strategic) removeFromLive(p fieldpath.Path, inAtomic bool) {
	if !inAtomic {
		s.remove.Insert(p)
	}
}

// value cleans patch, the value at p of type tr in a field with patch
// metadata pm. keep is false when the patch deletes the value.
func (s strategic) value(p fieldpath.Path, patch any, tr smdschema.TypeRef, pm patchMeta, inAtomic bool) (clean any, keep bool, err error) {
	atom, ok := s.t.doc.schema.Resolve(tr)
	if !ok {
		return nil, false, s.errorf(p, "the schema has no type for it")
	}
	switch pv := patch.(type) {
	case map[string]any:
		if atom.Map == nil {
			return nil, false, s.errorf(p, "the patch gives an object where the schema expects %s", shape(atom))
		}
		return s.object(p, pv, tr, atom.Map, pm, inAtomic)
	case []any:
		if atom.List == nil {
			return nil, false, s.errorf(p, "the patch gives a list where the schema expects %s", shape(atom))
		}
		l, err := s.list(p, pv, atom.List, pm, inAtomic)
		return l, err == nil, err
	default:
		if atom.Scalar == nil {
			return nil, false, s.errorf(p, "the patch gives %s where the schema expects %s", objectpath.Render(pv), shape(atom))
		}
		return pv, true, nil
	}
}

func shape(a smdschema.Atom) string {
	switch {
	case a.Map != nil:
		return "an object"
	case a.List != nil:
		return "a list"
	default:
		return "a single value"
	}
}

func (s strategic) object(p fieldpath.Path, patch map[string]any, tr smdschema.TypeRef, sm *smdschema.Map, pm patchMeta,
	inAtomic bool) (any, bool, error) {
	switch d := patch["$patch"]; d {
	case nil, "merge":
	case "delete":
		s.removeFromLive(p, inAtomic)
		return nil, false, nil
	case "replace":
		s.removeFromLive(p, inAtomic)
	default:
		return nil, false, s.errorf(p, "$patch is %s; use merge, replace or delete", objectpath.Render(d))
	}
	inAtomic = inAtomic || sm.ElementRelationship == smdschema.Atomic
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	if err := s.retainKeys(p, patch, keys, sm, pm, inAtomic); err != nil {
		return nil, false, err
	}
	out := make(map[string]any, len(patch))
	for _, k := range keys {
		v := patch[k]
		fp := append(p.Copy(), fieldpath.PathElement{FieldName: &k})
		switch {
		case k == "$patch", k == "$retainKeys", strings.HasPrefix(k, "$setElementOrder/"):
			continue
		case strings.HasPrefix(k, "$deleteFromPrimitiveList/"):
			field, err := s.deleteFromSet(p, k, v, tr, sm, inAtomic)
			if err != nil {
				return nil, false, err
			}
			if _, given := patch[field]; !given && s.forMerge {
				out[field] = []any{}
			}
			continue
		case strings.HasPrefix(k, "$"):
			return nil, false, s.errorf(p, "unknown patch directive %s", k)
		case v == nil:
			s.removeFromLive(fp, inAtomic)
			continue
		}
		ftr, fpm, known := s.t.field(tr, sm, k)
		if !known {
			return nil, false, s.errorf(fp, "no such field in the schema")
		}
		cv, keep, err := s.value(fp, v, ftr, fpm, inAtomic)
		if err != nil {
			return nil, false, err
		}
		if keep {
			out[k] = cv
		}
	}
	return out, true, nil
}

// retainKeys takes out of the live object at p the fields $retainKeys does
// not name or, under patch strategy retainKeys, the patch does not give. They
// are the object type's fields: retainKeys is for objects such as Volume,
// whose fields are the members of a union, not for maps.
func (s strategic) retainKeys(p fieldpath.Path, patch map[string]any, keys []string, sm *smdschema.Map, pm patchMeta, inAtomic bool) error {
	retained := map[string]bool{}
	if rk, ok := patch["$retainKeys"]; ok {
		list, ok := rk.([]any)
		if !ok {
			return s.errorf(p, "$retainKeys must be a list of field names")
		}
		for _, k := range list {
			name, _ := k.(string)
			retained[name] = true
		}
	} else if strings.Contains(pm.strategy, "retainKeys") {
		for _, k := range keys {
			retained[k] = true
		}
	} else {
		return nil
	}
	if len(sm.Fields) == 0 {
		return s.errorf(p, "$retainKeys needs an object type with named fields; this is a map")
	}
	for _, f := range sm.Fields {
		if !retained[f.Name] {
			s.removeFromLive(append(p.Copy(), fieldpath.PathElement{FieldName: &f.Name}), inAtomic)
		}
	}
	return nil
}

// deleteFromSet takes the values of $deleteFromPrimitiveList/<field> out of
// the live set at field, and returns field.
func (s strategic) deleteFromSet(p fieldpath.Path, directive string, values any, tr smdschema.TypeRef, sm *smdschema.Map,
	inAtomic bool) (string, error) {
	drop, ok := values.([]any)
	if !ok {
		return "", s.errorf(p, "%s must be a list of values", directive)
	}
	field := strings.TrimPrefix(directive, "$deleteFromPrimitiveList/")
	fp := append(p.Copy(), fieldpath.PathElement{FieldName: &field})
	ftr, _, known := s.t.field(tr, sm, field)
	atom, _ := s.t.doc.schema.Resolve(ftr)
	if !known || atom.List == nil || atom.List.ElementRelationship != smdschema.Associative || len(atom.List.Keys) > 0 {
		return "", s.errorf(fp, "%s works on a list of single values merged as a set, and this is not one", directive)
	}
	for _, v := range drop {
		v := value.NewValueInterface(v)
		s.removeFromLive(append(fp.Copy(), fieldpath.PathElement{Value: &v}), inAtomic)
	}
	return field, nil
}

func (s strategic) list(p fieldpath.Path, patch []any, sl *smdschema.List, pm patchMeta, inAtomic bool) ([]any, error) {
	inAtomic = inAtomic || sl.ElementRelationship == smdschema.Atomic
	// {"$patch": "replace"} as an element replaces the list with the others.
	elems := make([]any, 0, len(patch))
	for _, e := range patch {
		if em, ok := e.(map[string]any); ok && em["$patch"] == "replace" && len(em) == 1 {
			s.removeFromLive(p, inAtomic)
			continue
		}
		if e != nil {
			elems = append(elems, e)
		}
	}
	elemMeta := patchMeta{}
	if strings.Contains(pm.strategy, "retainKeys") {
		elemMeta.strategy = "retainKeys"
	}
	out := make([]any, 0, len(elems))
	for i, e := range elems {
		// Elements of atomic lists and sets are addressed by position: SMD
		// replaces the one and matches the other's values itself.
		ep := append(p.Copy(), fieldpath.PathElement{Index: &i})
		if len(sl.Keys) > 0 && sl.ElementRelationship == smdschema.Associative {
			em, ok := e.(map[string]any)
			if !ok {
				return nil, s.errorf(ep, "elements of this list are objects keyed by %s, not %s",
					strings.Join(sl.Keys, " and "), objectpath.Render(e))
			}
			key, ok := s.elementKey(sl, em)
			if !ok {
				return nil, s.errorf(ep, "the element sets none of the list's keys (%s)", strings.Join(sl.Keys, ", "))
			}
			ep = append(p.Copy(), key)
		}
		cv, keep, err := s.value(ep, e, sl.ElementType, elemMeta, inAtomic)
		if err != nil {
			return nil, err
		}
		if keep {
			out = append(out, s.withKeyDefaults(sl, cv))
		}
	}
	return out, nil
}

// elementKey is a list-map element's key as SMD computes it to match
// elements: its key fields, with the schema default of any it leaves out (a
// port without protocol is the TCP port). ok is false when the element has
// none of the keys and they have no defaults, which SMD refuses.
func (s strategic) elementKey(sl *smdschema.List, e map[string]any) (fieldpath.PathElement, bool) {
	var fields value.FieldList
	for _, k := range sl.Keys {
		v, has := e[k]
		if !has {
			v = s.keyDefault(sl, k)
		}
		if v != nil {
			fields = append(fields, value.Field{Name: k, Value: value.NewValueInterface(v)})
		}
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, len(fields) > 0
}

func (s strategic) keyDefault(sl *smdschema.List, key string) any {
	elem, _ := s.t.doc.schema.Resolve(sl.ElementType)
	if elem.Map == nil {
		return nil
	}
	f, _ := elem.Map.FindField(key)
	return f.Default
}

// withKeyDefaults writes defaulted key fields into a cleaned list-map element
// that leaves them out, when it is cleaned for Merge.
func (s strategic) withKeyDefaults(sl *smdschema.List, v any) any {
	e, ok := v.(map[string]any)
	if !ok || !s.forMerge || len(sl.Keys) == 0 {
		return v
	}
	for _, k := range sl.Keys {
		if _, has := e[k]; !has {
			if d := s.keyDefault(sl, k); d != nil {
				e[k] = d // e is the cleaned copy, never the caller's patch
			}
		}
	}
	return e
}
