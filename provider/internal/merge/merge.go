package merge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Merge returns live with patch applied the way a strategic-merge patch (or a
// Server-Side Apply of the same content) combines them, from t's metadata:
//
//   - objects and granular maps merge key by key; a null deletes the key;
//   - atomic maps and objects (x-kubernetes-map-type: atomic), atomic lists
//     and fields with patch strategy "replace" are replaced whole;
//   - list-maps merge element by element, matched on all their
//     x-kubernetes-list-map-keys (a key the patch element leaves out matches
//     its schema default, so a port without protocol is the TCP port); live
//     elements keep their order and new ones are appended;
//   - sets are the union of live then new values;
//   - under patch strategy retainKeys (a field, or each element of a
//     "merge,retainKeys" list such as volumes) the merged object keeps only
//     the keys the patch gives it, so a volume switched from configMap to
//     secret loses configMap;
//   - the directives $patch (merge, replace, delete), $retainKeys and
//     $deleteFromPrimitiveList/<field> work as in a strategic-merge patch;
//     $setElementOrder/<field> is accepted and ignored.
//
// A field t does not know, or a value of the wrong shape for its field, is an
// error naming its path. Neither argument is modified.
//
// Where a forced Server-Side Apply of the same patch differs: it has no
// retainKeys (a volume switched to secret keeps the configMap another manager
// owns, and the server then refuses two volume sources), and it places a new
// list element before a shared one that follows it in the patch, where Merge
// appends. Element order never changes which fields a patch sets (see Paths).
func Merge(live, patch map[string]any, t *Type) (map[string]any, error) {
	m := merger{t: t, defaultKeys: true}
	out, keep, err := m.value(nil, copyJSON(live), patch, t.root, patchMeta{})
	if err != nil {
		return nil, err
	}
	if !keep {
		return nil, fmt.Errorf("%s: the patch deletes the whole object ($patch: delete at its root)", t.gvk.Kind)
	}
	obj, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the patch does not leave an object at its root", t.gvk.Kind)
	}
	return obj, nil
}

type merger struct {
	t *Type
	// defaultKeys writes defaulted list-map keys into merged elements, as the
	// server's defaulting would. Paths leaves them out: a patch does not set
	// the fields it omits, and managedFields does not record them.
	defaultKeys bool
}

func (m merger) errorf(p objectpath.Path, format string, args ...any) error {
	where := p.String()
	if where == "" {
		where = "the object"
	}
	return fmt.Errorf("%s %s: %s", m.t.gvk.Kind, where, fmt.Sprintf(format, args...))
}

// value merges patch into live, both the value at p of type tr, whose field
// has patch metadata pm. keep is false when the patch deletes the value.
func (m merger) value(p objectpath.Path, live, patch any, tr smdschema.TypeRef, pm patchMeta) (out any, keep bool, err error) {
	atom, ok := m.t.doc.schema.Resolve(tr)
	if !ok {
		return nil, false, m.errorf(p, "the schema has no type for it")
	}
	switch pv := patch.(type) {
	case map[string]any:
		if atom.Map == nil {
			return nil, false, m.errorf(p, "the patch gives an object where the schema expects %s", shape(atom))
		}
		return m.object(p, live, pv, tr, atom.Map, pm)
	case []any:
		if atom.List == nil {
			return nil, false, m.errorf(p, "the patch gives a list where the schema expects %s", shape(atom))
		}
		l, err := m.list(p, live, pv, atom.List, pm)
		return l, err == nil, err
	default:
		if atom.Scalar == nil {
			return nil, false, m.errorf(p, "the patch gives %s where the schema expects %s", objectpath.Render(pv), shape(atom))
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

func (m merger) object(p objectpath.Path, live any, patch map[string]any, tr smdschema.TypeRef, sm *smdschema.Map, pm patchMeta) (any, bool, error) {
	base, _ := live.(map[string]any)
	switch d := patch["$patch"]; d {
	case nil, "merge":
	case "delete":
		return nil, false, nil
	case "replace":
		base = nil
	default:
		return nil, false, m.errorf(p, "$patch is %s; use merge, replace or delete", objectpath.Render(d))
	}
	if sm.ElementRelationship == smdschema.Atomic || pm.strategy == "replace" {
		base = nil
	}
	keys := make([]string, 0, len(patch))
	for k := range patch {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var retained map[string]bool
	if rk, ok := patch["$retainKeys"]; ok {
		list, ok := rk.([]any)
		if !ok {
			return nil, false, m.errorf(p, "$retainKeys must be a list of field names")
		}
		retained = map[string]bool{}
		for _, k := range list {
			s, _ := k.(string)
			retained[s] = true
		}
	} else if strings.Contains(pm.strategy, "retainKeys") {
		retained = map[string]bool{}
		for _, k := range keys {
			retained[k] = true
		}
	}
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		if retained == nil || retained[k] {
			out[k] = v
		}
	}

	for _, k := range keys {
		switch {
		case !strings.HasPrefix(k, "$"), k == "$patch", k == "$retainKeys", strings.HasPrefix(k, "$setElementOrder/"):
		case strings.HasPrefix(k, "$deleteFromPrimitiveList/"):
			field := strings.TrimPrefix(k, "$deleteFromPrimitiveList/")
			drop, ok := patch[k].([]any)
			if !ok {
				return nil, false, m.errorf(p, "%s must be a list of values", k)
			}
			if cur, ok := out[field].([]any); ok {
				out[field] = without(cur, drop)
			}
		default:
			return nil, false, m.errorf(p, "unknown patch directive %s", k)
		}
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "$") {
			continue
		}
		v := patch[k]
		if v == nil {
			delete(out, k)
			continue
		}
		fp := with(p, objectpath.Field(k))
		ftr, fpm, known := m.t.field(tr, sm, k)
		if !known {
			return nil, false, m.errorf(fp, "no such field in the schema")
		}
		nv, keep, err := m.value(fp, out[k], v, ftr, fpm)
		if err != nil {
			return nil, false, err
		}
		if keep {
			out[k] = nv
		} else {
			delete(out, k)
		}
	}
	return out, true, nil
}

func (m merger) list(p objectpath.Path, live any, patch []any, sl *smdschema.List, pm patchMeta) ([]any, error) {
	base, _ := live.([]any)
	if sl.ElementRelationship == smdschema.Atomic || pm.strategy == "replace" {
		base = nil
	}
	// {"$patch": "replace"} as an element replaces the list with the others.
	elems := make([]any, 0, len(patch))
	for _, e := range patch {
		if em, ok := e.(map[string]any); ok && em["$patch"] == "replace" && len(em) == 1 {
			base = nil
			continue
		}
		if e != nil {
			elems = append(elems, e)
		}
	}
	if sl.ElementRelationship == smdschema.Atomic || len(sl.Keys) == 0 {
		return m.union(p, base, elems, sl)
	}
	return m.byKey(p, base, elems, sl, pm)
}

// union appends the values of patch not in base, normalised (directives and
// nulls taken out). For an atomic list base is nil, so every value is kept.
func (m merger) union(p objectpath.Path, base, patch []any, sl *smdschema.List) ([]any, error) {
	out := append(make([]any, 0, len(base)+len(patch)), base...)
	seen := map[string]bool{}
	if sl.ElementRelationship != smdschema.Atomic {
		for _, e := range base {
			seen[jsonKey(e)] = true
		}
	}
	for i, e := range patch {
		nv, keep, err := m.value(with(p, objectpath.Segment{Index: &i}), nil, e, sl.ElementType, patchMeta{})
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		if sl.ElementRelationship != smdschema.Atomic {
			k := jsonKey(nv)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, nv)
	}
	return out, nil
}

// byKey merges a list-map: each patch element into the live element with the
// same keys, or appended.
func (m merger) byKey(p objectpath.Path, base, patch []any, sl *smdschema.List, pm patchMeta) ([]any, error) {
	elemMeta := patchMeta{}
	if strings.Contains(pm.strategy, "retainKeys") {
		elemMeta.strategy = "retainKeys"
	}
	out := append(make([]any, 0, len(base)+len(patch)), base...)
	ids := make([]string, len(out)) // ids[i] is the key of out[i]; both grow together
	for i, e := range out {
		if em, ok := e.(map[string]any); ok {
			ids[i], _, _ = m.identity(sl, em)
		}
	}
	for i, e := range patch {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, m.errorf(with(p, objectpath.Segment{Index: &i}), "elements of this list are objects keyed by %s, not %s",
				strings.Join(sl.Keys, " and "), objectpath.Render(e))
		}
		id, seg, ok := m.identity(sl, em)
		if !ok {
			return nil, m.errorf(with(p, objectpath.Segment{Index: &i}), "the element sets none of the list's keys (%s)", strings.Join(sl.Keys, ", "))
		}
		at := -1
		for j := range out {
			if ids[j] == id {
				at = j
				break
			}
		}
		var cur any
		if at >= 0 {
			cur = out[at]
		}
		nv, keep, err := m.value(with(p, seg), cur, em, sl.ElementType, elemMeta)
		switch {
		case err != nil:
			return nil, err
		case !keep && at >= 0:
			out = append(out[:at], out[at+1:]...)
			ids = append(ids[:at], ids[at+1:]...)
		case !keep:
		case at >= 0:
			out[at] = m.withKeyDefaults(sl, nv)
		default:
			out = append(out, m.withKeyDefaults(sl, nv))
			ids = append(ids, id) //nolint:makezero // ids[i] is the key of out[i]: both grow together
		}
	}
	return out, nil
}

// withKeyDefaults writes defaulted key fields into an element that leaves them
// out, as the API server's defaulting does, so the element can be found again
// by its full key (ports[containerPort=8080,protocol=TCP]).
func (m merger) withKeyDefaults(sl *smdschema.List, v any) any {
	e, ok := v.(map[string]any)
	if !ok || !m.defaultKeys {
		return v
	}
	elem, _ := m.t.doc.schema.Resolve(sl.ElementType)
	if elem.Map == nil {
		return v
	}
	copied := false
	for _, k := range sl.Keys {
		if _, has := e[k]; has {
			continue
		}
		if f, found := elem.Map.FindField(k); found && f.Default != nil {
			if !copied { // the element may be the caller's patch: never write into it
				c := make(map[string]any, len(e)+1)
				for ek, ev := range e {
					c[ek] = ev
				}
				e, copied = c, true
			}
			e[k] = f.Default
		}
	}
	return e
}

// identity is the key of a list-map element: its key fields, or their schema
// defaults when it leaves them out (as the API server keys it), as a string to
// compare and as the objectpath segment that selects it. ok is false when the
// element has none of the keys and they have no defaults.
func (m merger) identity(sl *smdschema.List, e map[string]any) (id string, seg objectpath.Segment, ok bool) {
	elem, _ := m.t.doc.schema.Resolve(sl.ElementType)
	parts := make([]string, len(sl.Keys))
	for i, k := range sl.Keys {
		v, has := e[k]
		if !has && elem.Map != nil {
			if f, found := elem.Map.FindField(k); found && f.Default != nil {
				v, has = f.Default, true
			}
		}
		if !has {
			continue // an empty part: no JSON text is empty
		}
		parts[i] = jsonKey(v)
		seg.Keys = append(seg.Keys, objectpath.KeyValue{Name: k, Value: objectpath.Render(v)})
	}
	sort.Slice(seg.Keys, func(i, j int) bool { return seg.Keys[i].Name < seg.Keys[j].Name })
	return strings.Join(parts, "\x00"), seg, len(seg.Keys) > 0
}

// jsonKey compares values as JSON, so 80, int64(80) and 80.0 are one value.
func jsonKey(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func without(list, drop []any) []any {
	gone := map[string]bool{}
	for _, d := range drop {
		gone[jsonKey(d)] = true
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		if !gone[jsonKey(e)] {
			out = append(out, e)
		}
	}
	return out
}

func with(p objectpath.Path, s objectpath.Segment) objectpath.Path {
	return append(append(make(objectpath.Path, 0, len(p)+1), p...), s)
}

// copyJSON deep-copies maps and lists of an unstructured value.
func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	default:
		return v
	}
}
