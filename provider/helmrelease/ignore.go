package helmrelease

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// ignoreRule is one entry of ignore_fields: a pattern of object keys, and
// the fields of those objects left to other managers.
type ignoreRule struct {
	pattern string
	fields  []objectpath.Path
}

type ignoreRules []ignoreRule

// ignoreRulesOf parses ignore_fields; ok is false when it is not known yet
// or is invalid (the errors are in diags).
func ignoreRulesOf(ctx context.Context, m types.Map, diags *diag.Diagnostics) (ignoreRules, bool) {
	if m.IsNull() {
		return nil, true
	}
	if m.IsUnknown() {
		return nil, false
	}
	var raw map[string][]types.String
	if d := m.ElementsAs(ctx, &raw, false); d.HasError() {
		return nil, false // elements not known yet
	}
	ok := true
	var out ignoreRules
	for _, pattern := range slices.Sorted(maps.Keys(raw)) {
		at := pathIgnoreFields.AtMapKey(pattern)
		if err := checkKeyPattern(pattern); err != nil {
			diags.AddAttributeError(at, "Invalid ignore_fields key", err.Error())
			ok = false
			continue
		}
		rule := ignoreRule{pattern: pattern}
		for i, s := range raw[pattern] {
			if s.IsUnknown() {
				ok = false
				continue
			}
			p, err := objectpath.Parse(s.ValueString())
			switch {
			case err != nil:
				diags.AddAttributeError(at.AtListIndex(i), "Invalid ignore_fields entry", err.Error())
				ok = false
			case p.Identifies():
				diags.AddAttributeError(at.AtListIndex(i), "Invalid ignore_fields entry",
					fmt.Sprintf("%s identifies the object and cannot be ignored.", p))
				ok = false
			default:
				rule.fields = append(rule.fields, p)
			}
		}
		out = append(out, rule)
	}
	return out, ok
}

// checkKeyPattern accepts an object key as objects shows it, in which `*`
// (and the other wildcards of Go's path.Match) match within one part.
func checkKeyPattern(pattern string) error {
	if _, err := path.Match(pattern, ""); err != nil {
		return fmt.Errorf("%q is not a valid pattern: %v", pattern, err)
	}
	if n := strings.Count(pattern, "/"); n != 2 && n != 3 {
		return fmt.Errorf("%q is not an object key: keys are <group>/<Kind>/<namespace>/<name> (<group>/<Kind>/<name> "+
			"for a cluster-scoped kind) as objects lists them, such as apps/Deployment/web/api; `*` matches any one "+
			"part, as in apps/Deployment/*/*", pattern)
	}
	return nil
}

// fieldsOf are the fields of the object keyed key that the rules leave out.
func (rs ignoreRules) fieldsOf(key string) []objectpath.Path {
	var out []objectpath.Path
	for _, r := range rs {
		if ok, _ := path.Match(r.pattern, key); ok {
			out = append(out, r.fields...)
		}
	}
	return out
}

// unmatched are the patterns that match none of keys: most likely a typo,
// since a rule that matches nothing protects nothing.
func (rs ignoreRules) unmatched(keys []string) []string {
	var out []string
	for _, r := range rs {
		if !slices.ContainsFunc(keys, func(k string) bool { ok, _ := path.Match(r.pattern, k); return ok }) {
			out = append(out, r.pattern)
		}
	}
	return out
}

// newlyIgnored are the fields of the object keyed key that after leaves out
// and before did not: those to hand over before the apply that leaves them out.
func newlyIgnored(before, after ignoreRules, key string) []objectpath.Path {
	was := map[string]bool{}
	for _, p := range before.fieldsOf(key) {
		was[p.String()] = true
	}
	var out []objectpath.Path
	for _, p := range after.fieldsOf(key) {
		if !was[p.String()] {
			out = append(out, p)
		}
	}
	return out
}

// ignore leaves the fields the rules name out of every object of the
// release (not its hooks, which run and go), and reports the patterns that
// matched no object.
func (rd *rendered) ignore(rules ignoreRules) {
	var keys []string
	for _, list := range [][]piece{rd.crds, rd.objects} {
		for i := range list {
			p := &list[i]
			keys = append(keys, p.key)
			p.ignored = rules.fieldsOf(p.key)
			for _, f := range p.ignored {
				f.RemoveEvery(p.obj.Object)
			}
		}
	}
	rd.unmatchedIgnores = rules.unmatched(keys)
}
