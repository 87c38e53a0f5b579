package objectset

import (
	"context"
	"fmt"
	"maps"
	pathpkg "path"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// IgnoreRule is one entry of ignore_fields: a pattern of object keys, and
// the fields of those objects left to other managers.
type IgnoreRule struct {
	Pattern string
	Fields  []objectpath.Path
}

type IgnoreRules []IgnoreRule

// IgnoreRulesOf parses ignore_fields (at); ok is false when it is not known yet
// or is invalid (the errors are in diags).
func IgnoreRulesOf(ctx context.Context, m types.Map, at path.Path, diags *diag.Diagnostics) (IgnoreRules, bool) {
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
	var out IgnoreRules
	for _, pattern := range slices.Sorted(maps.Keys(raw)) {
		at := at.AtMapKey(pattern)
		if err := CheckKeyPattern(pattern); err != nil {
			diags.AddAttributeError(at, "Invalid ignore_fields key", err.Error())
			ok = false
			continue
		}
		rule := IgnoreRule{Pattern: pattern}
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
				rule.Fields = append(rule.Fields, p)
			}
		}
		out = append(out, rule)
	}
	return out, ok
}

// CheckKeyPattern accepts an object key as objects shows it, in which `*`
// (and the other wildcards of Go's path.Match) match within one part.
func CheckKeyPattern(pattern string) error {
	if _, err := pathpkg.Match(pattern, ""); err != nil {
		return fmt.Errorf("%q is not a valid pattern: %v", pattern, err)
	}
	if n := strings.Count(pattern, "/"); n != 2 && n != 3 {
		return fmt.Errorf("%q is not an object key: keys are <group>/<Kind>/<namespace>/<name> (<group>/<Kind>/<name> "+
			"for a cluster-scoped kind) as objects lists them, such as apps/Deployment/web/api; `*` matches any one "+
			"part, as in apps/Deployment/*/*", pattern)
	}
	return nil
}

// FieldsOf are the fields of the object keyed key that the rules leave out.
func (rs IgnoreRules) FieldsOf(key string) []objectpath.Path {
	var out []objectpath.Path
	for _, r := range rs {
		if ok, _ := pathpkg.Match(r.Pattern, key); ok {
			out = append(out, r.Fields...)
		}
	}
	return out
}

// Unmatched are the patterns that match none of keys: most likely a typo,
// since a rule that matches nothing protects nothing.
func (rs IgnoreRules) Unmatched(keys []string) []string {
	var out []string
	for _, r := range rs {
		if !slices.ContainsFunc(keys, func(k string) bool { ok, _ := pathpkg.Match(r.Pattern, k); return ok }) {
			out = append(out, r.Pattern)
		}
	}
	return out
}

// NewlyIgnored are the fields of the object keyed key that after leaves out
// and before did not: those to hand over before the apply that leaves them out.
func NewlyIgnored(before, after IgnoreRules, key string) []objectpath.Path {
	was := map[string]bool{}
	for _, p := range before.FieldsOf(key) {
		was[p.String()] = true
	}
	var out []objectpath.Path
	for _, p := range after.FieldsOf(key) {
		if !was[p.String()] {
			out = append(out, p)
		}
	}
	return out
}
