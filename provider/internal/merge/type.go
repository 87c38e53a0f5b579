// Package merge computes what a patch does to an object the way Kubernetes
// would, from the merge metadata the cluster publishes for the object's type,
// for when the API server cannot be asked: a dry run an admission webhook
// refuses, a custom resource (which takes no strategic-merge patch), or a
// question about which fields a patch touches.
//
// It never falls back to a plain JSON merge. The merge is the server's own:
// structured-merge-diff, the Server-Side Apply engine, with the kind's schema
// converted from the cluster's OpenAPI v3 document by kube-openapi's schemaconv
// as the server converts it, so every list and map combines as
// x-kubernetes-list-type, -list-map-keys and -map-type say. The patch
// strategies schemaconv drops (-patch-strategy, -patch-merge-key) are read
// beside it, for Lookup and for retainKeys. Load reads the schema from the
// cluster, Merge applies a patch to a live object, and Paths lists the fields
// a patch sets in objectpath notation.
package merge

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Type is the merge metadata of one kind, as one cluster publishes it.
type Type struct {
	gvk  schema.GroupVersionKind
	doc  *document
	root smdschema.TypeRef
	// parser reads objects of the kind into structured-merge-diff's typed
	// values, as the server's type converter does before it applies a patch.
	parser typed.ParseableType
}

// GVK is the kind the type describes.
func (t *Type) GVK() schema.GroupVersionKind { return t.gvk }

// patchMeta is what a property says about patching it.
type patchMeta struct{ strategy, mergeKey string }

// FieldMeta is how a patch combines with one field of the live object.
type FieldMeta struct {
	// ListType is "atomic" (replaced whole), "set" (union of values) or "map"
	// (elements merged by ListMapKeys); empty when the field is not a list. A
	// list with no x-kubernetes-list-type but a merge patch strategy is a map
	// keyed by its merge key, or a set when it has none, as the API server
	// reads it.
	ListType    string
	ListMapKeys []string
	// MapType is "granular" (merged key by key) or "atomic" (replaced whole)
	// for objects and maps; empty for other fields.
	MapType string
	// PatchStrategy is x-kubernetes-patch-strategy as published: "merge",
	// "replace", "retainKeys" or "merge,retainKeys"; PatchMergeKey is
	// x-kubernetes-patch-merge-key.
	PatchStrategy string
	PatchMergeKey string
}

// Lookup returns the metadata of the field at p. List elements may be
// addressed by any selector ([0], [name=app], [=value]); fields of maps by
// their key (metadata.labels["app"]).
func (t *Type) Lookup(p objectpath.Path) (FieldMeta, error) {
	tr, pm := t.root, patchMeta{}
	for i, s := range p {
		atom, ok := t.doc.schema.Resolve(tr)
		if !ok {
			return FieldMeta{}, fmt.Errorf("%s: the schema has no type for %s", t.gvk.Kind, p[:i])
		}
		if s.Field != nil {
			if atom.Map == nil {
				return FieldMeta{}, fmt.Errorf("%s: %s is not an object", t.gvk.Kind, p[:i])
			}
			var known bool
			tr, pm, known = t.field(tr, atom.Map, *s.Field)
			if !known {
				return FieldMeta{}, fmt.Errorf("%s has no field %s", t.gvk.Kind, p[:i+1])
			}
			continue
		}
		if atom.List == nil {
			return FieldMeta{}, fmt.Errorf("%s: %s is not a list", t.gvk.Kind, p[:i])
		}
		tr, pm = atom.List.ElementType, patchMeta{}
	}
	atom, ok := t.doc.schema.Resolve(tr)
	if !ok {
		return FieldMeta{}, fmt.Errorf("%s: the schema has no type for %s", t.gvk.Kind, p)
	}
	m := FieldMeta{PatchStrategy: pm.strategy, PatchMergeKey: pm.mergeKey}
	deduced := atom.List != nil && atom.Map != nil
	if atom.List != nil && !deduced {
		switch {
		case atom.List.ElementRelationship == smdschema.Atomic:
			m.ListType = "atomic"
		case len(atom.List.Keys) > 0:
			m.ListType, m.ListMapKeys = "map", append([]string(nil), atom.List.Keys...)
		default:
			m.ListType = "set"
		}
	}
	if atom.Map != nil && !deduced {
		m.MapType = "granular"
		if atom.Map.ElementRelationship == smdschema.Atomic {
			m.MapType = "atomic"
		}
	}
	return m, nil
}

// field returns the type of field name in m, the map or object tr resolves to,
// and its patch metadata. known is false when the type has no such field and
// takes no others.
func (t *Type) field(tr smdschema.TypeRef, m *smdschema.Map, name string) (smdschema.TypeRef, patchMeta, bool) {
	if f, ok := m.FindField(name); ok {
		var pm patchMeta
		if tr.NamedType != nil {
			pm = t.doc.patch[*tr.NamedType][name]
		}
		return f.Type, pm, true
	}
	et := m.ElementType
	return et, patchMeta{}, et.NamedType != nil || et.Inlined != (smdschema.Atom{})
}
