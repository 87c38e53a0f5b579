// Package projection computes the managed state projection (ADR 0004): the
// values of only the fields k8sconnect owns, as the server stores them. Drift is
// judged on this projection, so a label someone else adds, a default the server
// fills in, or a field an HPA owns never shows up as a diff, while a change to a
// field we own always does.
package projection

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/largevalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
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
// someone deleted shows as removed. Sensitive leaves (see package sensitive)
// hold red's keyed hash of the value, never the value.
//
// Paths and values are in Unicode normalization form C: Terraform and OpenTofu
// hold every string in NFC, so a value the server stores decomposed (written as
// "e\u0301" in yaml_body) would come back from state composed and differ from
// a fresh projection on every plan. A change that only re-normalizes a string
// is therefore not drift.
func Of(obj map[string]any, leaves []Leaf, red sensitive.Redactor) Projection {
	p := make(Projection, len(leaves))
	for _, l := range leaves {
		if v, ok := Value(obj, l.Path); ok {
			p[nfc(red.Name(obj, l.Path))] = nfc(red.Render(obj, l.Path, v))
		}
	}
	return p
}

func nfc(s string) string { return norm.NFC.String(s) }

// Value is the value at path p of obj as a projection sees it. A Secret's
// stringData is write-only: the server stores stringData.<key> decoded into
// data.<key> and keeps no stringData, so that is where its value is read
// (and a change to data.<key> by someone else is drift on stringData.<key>).
func Value(obj map[string]any, p objectpath.Path) (any, bool) {
	if v, ok := p.Get(obj); ok {
		return v, true
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if !sensitive.IsSecret(apiVersion, kind) || len(p) != 2 || p[0].Field == nil || *p[0].Field != "stringData" || p[1].Field == nil {
		return nil, false
	}
	enc, ok := objectpath.Path{objectpath.Field("data"), p[1]}.Get(obj)
	s, isString := enc.(string)
	if !ok || !isString {
		return nil, false
	}
	dec, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return string(dec), true
}

// Ownership lists the managers of each leaf of obj, named as red names them.
func Ownership(obj map[string]any, fields managedfields.Fields, leaves []Leaf, red sensitive.Redactor) map[string][]string {
	out := make(map[string][]string, len(leaves))
	for _, l := range leaves {
		if owners := fields.Owners(l.Field); len(owners) > 0 {
			out[nfc(red.Name(obj, l.Path))] = owners
		}
	}
	return out
}

// OwnersByPath lists, for every leaf of obj any manager owns, the managers
// that own it; paths are named as red names them, like a projection's.
func OwnersByPath(obj map[string]any, fields managedfields.Fields, red sensitive.Redactor) map[string][]string {
	out := map[string][]string{}
	for m, s := range fields {
		for _, l := range Leaves(s) {
			k := nfc(red.Name(obj, l.Path))
			out[k] = append(out[k], m)
		}
	}
	for _, owners := range out {
		sort.Strings(owners)
	}
	return out
}

// Observation is what one look at an object (live, dry run or apply result) says
// about the fields one manager manages.
type Observation struct {
	Projection Projection
	Ownership  map[string][]string
	// Owned is the set the manager owns in this object, with sensitive
	// selectors hashed (sensitive.Redactor.RedactSet) and the excluded paths
	// left out (they are never projected, and every object would carry them
	// in its private state); callers keep it to pass as prev next time.
	Owned *fieldpath.Set
}

// Observe projects obj onto the fields manager owns there plus prev, the fields
// it owned after its last apply: a field another manager took since is still
// shown, with its new value, so a plan shows the drift it will revert. Paths
// under exclude are left out of the projection; those under ignored are left
// out too but kept in the ownership map, since who took them over is what users
// ask about.
//
// Sensitive values are rendered by the zero Redactor (a Secret's data as
// sensitive.Pending); resources pass their own to ObserveRedacted.
func Observe(obj *unstructured.Unstructured, manager string, prev *fieldpath.Set, exclude, ignored []objectpath.Path) (Observation, error) {
	return ObserveRedacted(obj, manager, prev, exclude, ignored, sensitive.Redactor{})
}

// ObserveRedacted is Observe with the resource's own redactor.
func ObserveRedacted(obj *unstructured.Unstructured, manager string, prev *fieldpath.Set, exclude, ignored []objectpath.Path,
	red sensitive.Redactor) (Observation, error) {
	fields, err := managedfields.Of(obj)
	if err != nil {
		return Observation{}, err
	}
	owned := fields.Manager(manager)
	tracked := owned
	if prev != nil {
		tracked = owned.Union(red.ResolveSet(obj.Object, prev))
	}
	leaves := Leaves(tracked, append(append([]objectpath.Path{}, exclude...), ignored...)...)
	projected := Of(obj.Object, leaves, red)
	for _, s := range fields {
		for _, l := range Leaves(s) {
			if l.Path.UnderAny(ignored) {
				leaves = append(leaves, l)
			}
		}
	}
	return Observation{Projection: projected, Ownership: Ownership(obj.Object, fields, leaves, red),
		Owned: red.RedactSet(obj.Object, without(owned, exclude))}, nil
}

// without is s less its leaves under any of paths.
func without(s *fieldpath.Set, paths []objectpath.Path) *fieldpath.Set {
	var drop []fieldpath.Path
	s.Leaves().Iterate(func(fp fieldpath.Path) {
		if objectpath.FromFieldPath(fp).UnderAny(paths) {
			drop = append(drop, fp.Copy())
		}
	})
	if len(drop) == 0 {
		return s
	}
	return s.Difference(fieldpath.NewSet(drop...))
}

// LargeChangesSummary is the summary of LargeChanges' warnings.
const LargeChangesSummary = "A large value changes"

// largeChangesShown is how many changed fields a LargeChanges warning lists
// per value.
const largeChangesShown = 10

// LargeChanges is the detail of a plan warning for each value of planned that
// is held by its digest (package largevalue) and differs from stored, the
// projection in state: the fields that differ inside it, live against dry,
// the dry run's answer, which is what the apply will write. The plan itself
// shows only that the digest changes. subject names the object, attribute the
// projection that holds the stand-in.
func LargeChanges(subject, attribute string, live, dry *unstructured.Unstructured, planned, stored Projection,
	red sensitive.Redactor) []string {
	var names []string
	for name, v := range planned {
		if largevalue.Is(v) && stored[name] != v {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []string
	for _, name := range names {
		p, err := red.Resolve(dry.Object, name)
		if err != nil {
			continue
		}
		was, _ := Value(live.Object, p)
		now, _ := Value(dry.Object, p)
		changes, total := largevalue.Changes(p, was, now, largeChangesShown)
		if total == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s holds %s of %s by its length and digest, a value too large to keep in state twice, "+
			"so the plan shows only that the digest changes. The apply changes these fields in it (%d in all):",
			attribute, name, subject, total)
		for _, c := range changes {
			fmt.Fprintf(&b, "\n  %s: %s -> %s", c.Path, c.Was, c.Now)
		}
		if total > len(changes) {
			fmt.Fprintf(&b, "\n  and %d more", total-len(changes))
		}
		out = append(out, b.String())
	}
	return out
}
