// Package projection computes the managed state projection (ADR-006): the
// values of only the fields k8sconnect owns, as the server stores them. Drift is
// judged on this projection, so a label someone else adds, a default the server
// fills in, or a field an HPA owns never shows up as a diff, while a change to a
// field we own always does.
package projection

import (
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Projection maps a field path to its rendered value.
type Projection map[string]string

// Leaf is one owned field: its path in both notations.
type Leaf struct {
	Field fieldpath.Path
	Path  objectpath.Path
}

// Leaves lists the leaf fields of a field set, in a stable order, leaving out
// any under the excluded prefixes.
func Leaves(set *fieldpath.Set, exclude ...objectpath.Path) []Leaf {
	var out []Leaf
	set.Leaves().Iterate(func(fp fieldpath.Path) {
		p := objectpath.FromFieldPath(fp)
		for _, x := range exclude {
			if p.HasPrefix(x) {
				return
			}
		}
		out = append(out, Leaf{Field: fp.Copy(), Path: p})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path.String() < out[j].Path.String() })
	return out
}

// Of projects obj onto leaves. A leaf missing from obj is left out, so a field
// someone deleted shows as removed.
func Of(obj map[string]any, leaves []Leaf) Projection {
	p := make(Projection, len(leaves))
	for _, l := range leaves {
		if v, ok := l.Path.Get(obj); ok {
			p[l.Path.String()] = objectpath.Render(v)
		}
	}
	return p
}

// Ownership lists the managers of each leaf.
func Ownership(fields managedfields.Fields, leaves []Leaf) map[string][]string {
	out := make(map[string][]string, len(leaves))
	for _, l := range leaves {
		if owners := fields.Owners(l.Field); len(owners) > 0 {
			out[l.Path.String()] = owners
		}
	}
	return out
}

// OwnersByPath lists, for every leaf any manager owns, the managers that own it.
func OwnersByPath(fields managedfields.Fields) map[string][]string {
	out := map[string][]string{}
	for m, s := range fields {
		for _, l := range Leaves(s) {
			k := l.Path.String()
			out[k] = append(out[k], m)
		}
	}
	for _, owners := range out {
		sort.Strings(owners)
	}
	return out
}
