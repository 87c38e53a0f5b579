package bundles

import (
	"encoding/json"

	"sigs.k8s.io/yaml"
)

// PropertyFormat is the format of the schema property named field anywhere
// in a CRD as read from the cluster (generated property names are unique in
// a CRD), or "" if there is none: what a test reads back after changing it
// with WidenDeepestInt32.
func PropertyFormat(crd map[string]any, field string) string {
	return propertyFormat(crd, field)
}

func propertyFormat(v any, field string) string {
	switch v := v.(type) {
	case map[string]any:
		if p, ok := v[field].(map[string]any); ok {
			if f, ok := p["format"].(string); ok {
				return f
			}
		}
		for _, e := range v {
			if f := propertyFormat(e, field); f != "" {
				return f
			}
		}
	case []any:
		for _, e := range v {
			if f := propertyFormat(e, field); f != "" {
				return f
			}
		}
	}
	return ""
}

// VersionsPatch is a JSON merge patch that sets a CRD's spec.versions to
// those of crd (YAML), as another tool's update of its schema would: merge
// patches replace a list whole. A test sends it with acctest.PatchAs to
// change one field deep inside a CRD behind k8sconnect's back.
func VersionsPatch(crd string) string {
	var obj struct {
		Spec struct {
			Versions json.RawMessage `json:"versions"`
		} `json:"spec"`
	}
	if j, err := yaml.YAMLToJSON([]byte(crd)); err != nil || json.Unmarshal(j, &obj) != nil {
		panic("bundles.VersionsPatch: not a CRD made by CRD")
	}
	return `{"spec":{"versions":` + string(obj.Spec.Versions) + `}}`
}
