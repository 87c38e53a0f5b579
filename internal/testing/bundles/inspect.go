package bundles

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
