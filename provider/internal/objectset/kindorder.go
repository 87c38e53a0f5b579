package objectset

import (
	"errors"
	"slices"
	"strings"

	relutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// Helm's kind order, which users know from charts: kinds installed and
// uninstalled one after the other.

// KindRank is a kind's place in order; unknown kinds go last, as Helm puts
// them.
func KindRank(order relutil.KindSortOrder, kind string) int {
	if i := slices.Index(order, kind); i >= 0 {
		return i
	}
	return len(order)
}

// CompareKinds orders two kinds as Helm's kind sorter does: by their place
// in order, unknown kinds after every known one and among themselves by
// name.
func CompareKinds(order relutil.KindSortOrder, a, b string) int {
	ra, rb := KindRank(order, a), KindRank(order, b)
	if ra == len(order) && rb == len(order) {
		return strings.Compare(a, b)
	}
	return ra - rb
}

// KindByKind runs do on the items of each run of one kind in items (sorted
// by kind order already), one run after the other and the items of a run in
// parallel, as helm installs and uninstalls: a ServiceAccount exists before
// the Deployment that runs as it. It stops after the first run with errors.
func KindByKind[T any](items []T, kind func(T) string, do func(T) error) error {
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && kind(items[end]) == kind(items[start]) {
			end++
		}
		run := items[start:end]
		errs := make([]error, len(run))
		InParallel(len(run), func(i int) { errs[i] = do(run[i]) })
		if err := errors.Join(errs...); err != nil {
			return err
		}
		start = end
	}
	return nil
}
