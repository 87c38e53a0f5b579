package helmchart

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// versionsShown is how many available versions an error lists.
const versionsShown = 5

// pickVersion chooses from available (newest first, as Helm sorts an index
// and a registry's tags) the version want names: itself if it is there
// verbatim, else the newest that satisfies want as a semver constraint
// (empty: any). Pre-releases match only when devel is set or the constraint
// names one. Helm's --devel widens only an empty version (to ">0.0.0-0");
// devel here widens a constraint too, so "^1.2" with devel may pick
// 1.3.0-rc.1, as Source.Devel says.
//
// what names the chart in errors.
func pickVersion(what string, available []string, want string, devel bool) (string, error) {
	if want != "" {
		for _, v := range available {
			if v == want {
				return v, nil
			}
		}
	}
	constraint := want
	if constraint == "" {
		constraint = "*"
	}
	parsed, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("version %q of %s is neither a version nor a semver constraint: %w", want, what, err)
	}
	parsed.IncludePrerelease = devel
	for _, v := range available {
		candidate, err := semver.NewVersion(v)
		if err != nil {
			continue
		}
		if parsed.Check(candidate) {
			return v, nil
		}
	}
	return "", noMatchingVersion(what, available, want, devel)
}

func noMatchingVersion(what string, available []string, want string, devel bool) error {
	if len(available) == 0 {
		return fmt.Errorf("%s has no versions", what)
	}
	described := "no version"
	if want != "" {
		described = fmt.Sprintf("no version matching %q", want)
	}
	shown := available
	more := ""
	if len(shown) > versionsShown {
		shown, more = shown[:versionsShown], fmt.Sprintf(", … (%d in all)", len(available))
	}
	hint := ""
	if !devel && hasPrerelease(available) {
		hint = "; pre-releases match only with devel = true"
	}
	return fmt.Errorf("%s of %s; the newest are %s%s%s", described, what, strings.Join(shown, ", "), more, hint)
}

func hasPrerelease(versions []string) bool {
	for _, v := range versions {
		if parsed, err := semver.NewVersion(v); err == nil && parsed.Prerelease() != "" {
			return true
		}
	}
	return false
}
