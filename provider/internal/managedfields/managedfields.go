// Package managedfields reads who owns which field from an object's
// metadata.managedFields, the server's own record of Server-Side Apply ownership.
package managedfields

import (
	"fmt"
	"sort"

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
		s, err := ParseSet(e.FieldsV1.Raw)
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
