package helmchart

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/merge"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// pruneUnknownFields leaves out of every body of sorted (CRDs, objects and
// hooks) the fields the cluster's schema of its kind does not declare
// (merge.Prune), for disable_openapi_validation: helm asks the API server to
// drop them (field validation Ignore), which a Server-Side Apply request
// does not do, so they are dropped before any request. A kind the cluster
// does not describe yet (its CRD comes with the chart) is kept as rendered.
// It returns, by key, the fields left out; a body nothing was left out of is
// kept as it was, byte for byte.
func pruneUnknownFields(sorted *Sorted, schemas merge.Source) (map[string][]string, error) {
	pruned := map[string][]string{}
	for _, m := range []map[string]string{sorted.Objects.CRDs, sorted.Objects.ClusterScoped, sorted.Objects.Namespaced, sorted.Hooks} {
		for _, key := range slices.Sorted(maps.Keys(m)) {
			var dropped []string
			body, err := yamldocs.EditBody(m[key], func(obj map[string]any) error {
				t, err := merge.Load(schemas, (&unstructured.Unstructured{Object: obj}).GroupVersionKind())
				if err == nil {
					dropped = merge.Prune(obj, t)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			if len(dropped) == 0 {
				continue
			}
			m[key] = body
			// A key that is both a hook and an object (helmchart.Sorted)
			// renders one body: the same fields.
			pruned[key] = dropped
		}
	}
	return pruned, nil
}
