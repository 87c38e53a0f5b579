package merge

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Paths lists the leaf fields patch sets, sorted, in objectpath notation:
// list-map elements by their keys (a key the element leaves out by its schema
// default), set elements by value. They are computed with structured-merge-diff
// from the same schema the API server uses for managedFields, so they are the
// paths a Server-Side Apply of patch would record for its manager, keys of
// list-map elements included (containers[name=app].name), and compare as
// strings with k8sconnect's projections. Nulls, elements deleted with $patch:
// delete and other directives set nothing and are left out.
func Paths(patch map[string]any, t *Type) ([]objectpath.Path, error) {
	pruned, keep := prune(patch)
	if !keep {
		return nil, nil
	}
	// What the patch sets is the patch without its directives, parsed as the
	// server parses an applied patch.
	set, _, err := newStrategic(t, false).value(nil, pruned, t.root, patchMeta{}, false)
	if err != nil {
		return nil, err
	}
	tv, err := t.parser.FromUnstructured(set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, err)
	}
	fields, err := tv.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.gvk.Kind, err)
	}
	var out []objectpath.Path
	fields.Leaves().Iterate(func(fp fieldpath.Path) {
		out = append(out, objectpath.FromFieldPath(fp))
	})
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// prune takes out what deletes rather than sets: nulls, values marked
// $patch: delete, and the objects and lists left empty by their removal (an
// object or list the patch gives empty is kept: it sets an empty value).
func prune(v any) (any, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		if t["$patch"] == "delete" {
			return nil, false
		}
		out := make(map[string]any, len(t))
		had, kept := false, false
		for k, e := range t {
			if strings.HasPrefix(k, "$") {
				out[k] = e
				continue
			}
			had = true
			if pe, ok := prune(e); ok {
				out[k] = pe
				kept = true
			}
		}
		return out, kept || !had
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if pe, ok := prune(e); ok {
				out = append(out, pe)
			}
		}
		return out, len(out) > 0 || len(t) == 0
	default:
		return v, true
	}
}
