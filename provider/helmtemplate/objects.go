package helmtemplate

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
	"github.com/k8sconnect/k8sconnect/provider/internal/yamldocs"
)

// objects are a rendered chart's documents as the data source hands them out.
type objects struct {
	crds, clusterScoped, namespaced, hooks, sensitive map[string]string
	// sensitiveFields are, per key of sensitive, the paths of the fields that
	// hold a set_sensitive value, for k8sconnect_object's sensitive_fields:
	// hiding yaml_body is not enough, the projection shows each field.
	sensitiveFields map[string][]string
}

// sensitiveApart hands out the chart's objects as sorted, with every Secret
// and every body that holds one of secrets moved into the sensitive map.
func sensitiveApart(sorted helmchart.Sorted, secrets []string) (objects, error) {
	out := objects{crds: sorted.Objects.CRDs, clusterScoped: sorted.Objects.ClusterScoped, namespaced: sorted.Objects.Namespaced,
		hooks: sorted.Hooks, sensitive: map[string]string{}, sensitiveFields: map[string][]string{}}
	var errs []error
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return len(s) < sensitive.MinScrub })
	needles := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		needles = append(needles, yamldocs.InBody(s), base64.StdEncoding.EncodeToString([]byte(s)))
	}
	for _, m := range []map[string]string{out.crds, out.clusterScoped, out.namespaced, out.hooks} {
		for key, body := range m {
			if helmchart.NameHoldsSecret(key, secrets) {
				errs = append(errs, errors.New(helmchart.SecretInName))
				continue
			}
			if !yamldocs.IsSecretBody(body) && !helmchart.ContainsAny(body, needles) {
				continue
			}
			if _, twice := out.sensitive[key]; twice {
				errs = append(errs, fmt.Errorf("%s is both a hook and an object of the release, and holds secret "+
					"values; the sensitive map can hand out only one of them", key))
				continue
			}
			out.sensitive[key] = body
			delete(m, key)
			paths, err := helmchart.FieldsHolding(body, secrets)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
				continue
			}
			if len(paths) > 0 {
				out.sensitiveFields[key] = paths
			}
		}
	}
	if len(errs) > 0 {
		return objects{}, errors.Join(errs...)
	}
	return out, nil
}
