package helmtemplate

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
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

// sortObjects reads every rendered document with the reader the other data
// sources use (so the bodies and keys are theirs, and an error names the
// template file, document and line), sorts objects by scope as
// k8sconnect_yaml_scoped does, keeps lifecycle hooks apart, and moves every
// Secret and every body that holds one of secrets into the sensitive map.
func sortObjects(r *helmchart.Rendered, namespace string, finder yamldocs.ScopeFinder, secrets []string) (objects, error) {
	var objectDocs, hookDocs []yamldocs.Document
	var errs []error
	for _, f := range r.CRDs {
		objectDocs = append(objectDocs, yamldocs.SplitDocuments(f.Path, []byte(f.Text))...)
	}
	for _, f := range r.Files {
		for _, d := range yamldocs.SplitDocuments(f.Path, []byte(f.Text)) {
			if !yamldocs.HasContent(d.Text) {
				continue
			}
			role, err := helmchart.RoleOf(d.Text)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", d.Where(), err))
				continue
			}
			switch role {
			case helmchart.Object:
				objectDocs = append(objectDocs, d)
			case helmchart.Hook:
				hookDocs = append(hookDocs, d)
			case helmchart.TestHook, helmchart.Skipped:
				// Not part of an install or an upgrade.
			}
		}
	}
	if len(errs) > 0 {
		return objects{}, errors.Join(errs...)
	}
	release, err := classify(objectDocs, finder, namespace)
	if err != nil {
		return objects{}, err
	}
	hooks, err := classify(hookDocs, finder, namespace)
	if err != nil {
		return objects{}, err
	}
	out := objects{crds: release.CRDs, clusterScoped: release.ClusterScoped, namespaced: release.Namespaced,
		hooks: map[string]string{}, sensitive: map[string]string{}, sensitiveFields: map[string][]string{}}
	for _, m := range []map[string]string{hooks.CRDs, hooks.ClusterScoped, hooks.Namespaced} {
		maps.Copy(out.hooks, m)
	}

	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return len(s) < sensitive.MinScrub })
	needles := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		needles = append(needles, yamldocs.InBody(s), base64.StdEncoding.EncodeToString([]byte(s)))
	}
	for _, m := range []map[string]string{out.crds, out.clusterScoped, out.namespaced, out.hooks} {
		for key, body := range m {
			if nameHoldsSecret(key, secrets) {
				errs = append(errs, fmt.Errorf("the name of an object the chart renders holds a set_sensitive value; "+
					"keys are never sensitive, so pass that value with set instead, or name the object otherwise"))
				continue
			}
			if !isSecret(body) && !containsAny(body, needles) {
				continue
			}
			if _, twice := out.sensitive[key]; twice {
				errs = append(errs, fmt.Errorf("%s is both a hook and an object of the release, and holds secret "+
					"values; the sensitive map can hand out only one of them", key))
				continue
			}
			out.sensitive[key] = body
			delete(m, key)
			paths, err := fieldsHolding(body, secrets)
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

func classify(docs []yamldocs.Document, finder yamldocs.ScopeFinder, namespace string) (yamldocs.Scoped, error) {
	manifests, err := yamldocs.Split(docs)
	if err != nil {
		return yamldocs.Scoped{}, err
	}
	return yamldocs.ClassifyInNamespace(manifests, finder, namespace)
}

func containsAny(s string, needles []string) bool {
	for _, n := range needles {
		if n != "" && strings.Contains(s, n) {
			return true
		}
	}
	return false
}

func isSecret(body string) bool {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(body), &head); err != nil {
		return true // unreadable: not shown
	}
	return sensitive.IsSecret(head.APIVersion, head.Kind)
}

// fieldsHolding lists, in the path language of sensitive_fields, every field
// of body whose value holds one of secrets as written or base64-encoded (a
// whole config file in a ConfigMap's data counts, as it shows whole).
func fieldsHolding(body string, secrets []string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var obj any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	forms := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		forms = append(forms, s, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	var out []string
	var walk func(v any, at objectpath.Path)
	walk = func(v any, at objectpath.Path) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], append(slices.Clip(at), objectpath.Field(k)))
			}
		case []any:
			for i, e := range v {
				walk(e, append(slices.Clip(at), objectpath.Segment{Index: &i}))
			}
		case string:
			if containsAny(v, forms) {
				out = append(out, at.String())
			}
		case json.Number, bool:
			// set_sensitive "42" reaches a template as the number 42.
			if slices.Contains(secrets, fmt.Sprint(v)) {
				out = append(out, at.String())
			}
		}
	}
	walk(obj, nil)
	return out, nil
}

// minNameSecret is the shortest set_sensitive value an object's key is
// refused for holding. A shorter one ("admin", "web") is found in names by
// chance, and refusing the chart's own names would leave the user no way out;
// a value this long in a name was put there by the template.
const minNameSecret = 8

func nameHoldsSecret(key string, secrets []string) bool {
	for _, s := range secrets {
		if len(s) >= minNameSecret && strings.Contains(key, s) {
			return true
		}
	}
	return false
}
