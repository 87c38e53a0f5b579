// Package managedfields reads who owns which field from an object's
// metadata.managedFields, the server's own record of Server-Side Apply ownership.
package managedfields

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Fields maps each field manager to the fields it owns. A manager that both
// applies and updates the object owns the union of its entries.
type Fields map[string]*fieldpath.Set

// Of parses obj's managedFields. Entries for the status subresource are left
// out: controllers own status, and it is never part of what a user declares.
func Of(obj *unstructured.Unstructured) (Fields, error) {
	f := Fields{}
	for _, e := range obj.GetManagedFields() {
		if e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		s, err := ParseSet(e.FieldsV1.GetRawBytes())
		if err != nil {
			return nil, fmt.Errorf("managedFields entry of %q cannot be read: %w", e.Manager, err)
		}
		if prev, ok := f[e.Manager]; ok {
			s = prev.Union(s)
		}
		f[e.Manager] = s
	}
	return f, nil
}

// Manager returns the fields one manager owns (empty, never nil).
func (f Fields) Manager(name string) *fieldpath.Set {
	if s, ok := f[name]; ok {
		return s
	}
	return fieldpath.NewSet()
}

// Owners lists, sorted, every manager that owns p. Several managers can own the
// same field when they applied the same value (shared ownership).
func (f Fields) Owners(p fieldpath.Path) []string {
	var owners []string
	for m, s := range f {
		if s.Has(p) {
			owners = append(owners, m)
		}
	}
	sort.Strings(owners)
	return owners
}

// Release returns obj's managedFields with every field drop selects taken out
// of manager's entries, and how many fields that released. Writing the result
// back hands those fields over with their values: no manager owns them, so the
// server keeps them, where an apply that merely stopped sending them would
// delete every field only that manager owned.
func Release(obj *unstructured.Unstructured, manager string, drop func(fieldpath.Path) bool) ([]metav1.ManagedFieldsEntry, int, error) {
	entries := obj.GetManagedFields()
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	released := 0
	for _, e := range entries {
		if e.Manager != manager || e.Subresource != "" || e.FieldsV1 == nil {
			out = append(out, e)
			continue
		}
		s := fieldpath.NewSet()
		if err := s.FromJSON(bytes.NewReader(e.FieldsV1.GetRawBytes())); err != nil {
			return nil, 0, fmt.Errorf("managedFields entry of %q cannot be read: %w", e.Manager, err)
		}
		gone := fieldpath.NewSet()
		s.Iterate(func(p fieldpath.Path) {
			if drop(p) {
				gone.Insert(p)
			}
		})
		if gone.Empty() {
			out = append(out, e)
			continue
		}
		released += gone.Leaves().Size()
		kept := s.Difference(gone)
		if kept.Empty() {
			continue
		}
		raw, err := kept.ToJSON()
		if err != nil {
			return nil, 0, err
		}
		e.FieldsV1 = metav1.NewFieldsV1(string(raw))
		out = append(out, e)
	}
	if len(out) == 0 {
		// An empty list means "leave managedFields alone" to the server; one
		// empty entry clears them.
		out = []metav1.ManagedFieldsEntry{{}}
	}
	return out, released, nil
}

// WriteBody is the merge patch that replaces an object's managedFields, bound
// to the resourceVersion they were read at, so a concurrent change fails the
// write with a conflict instead of being overwritten.
func WriteBody(entries []metav1.ManagedFieldsEntry, resourceVersion string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"managedFields": entries, "resourceVersion": resourceVersion,
	}})
}
