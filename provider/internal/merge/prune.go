package merge

import (
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Prune removes from obj, in place, the fields the kind's schema does not
// declare, as the API server's field validation Ignore drops them from a
// create or an update; a Server-Side Apply request would be refused for
// them whatever validation it asked for. It returns the fields removed, in
// objectpath notation. A field whose schema keeps unknown fields
// (x-kubernetes-preserve-unknown-fields) keeps them; a value of the wrong
// shape is left for the server to refuse.
func Prune(obj map[string]any, t *Type) []string {
	var dropped []string
	var walk func(p fieldpath.Path, v any, tr smdschema.TypeRef)
	walk = func(p fieldpath.Path, v any, tr smdschema.TypeRef) {
		atom, ok := t.doc.schema.Resolve(tr)
		if !ok {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if atom.Map == nil {
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				child := append(p.Copy(), fieldpath.PathElement{FieldName: &k})
				if f, ok := atom.Map.FindField(k); ok {
					walk(child, x[k], f.Type)
					continue
				}
				if atom.Map.ElementType != (smdschema.TypeRef{}) {
					walk(child, x[k], atom.Map.ElementType)
					continue
				}
				delete(x, k)
				dropped = append(dropped, objectpath.FromFieldPath(child).String())
			}
		case []any:
			if atom.List == nil {
				return
			}
			for i, e := range x {
				walk(append(p.Copy(), fieldpath.PathElement{Index: &i}), e, atom.List.ElementType)
			}
		}
	}
	walk(fieldpath.Path{}, obj, t.root)
	return dropped
}
