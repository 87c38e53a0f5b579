package helmchart

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// ContainsAny reports whether s holds any of the non-empty needles.
func ContainsAny(s string, needles []string) bool {
	for _, n := range needles {
		if n != "" && strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// FieldsHolding lists, in the path language of sensitive_fields, every field
// of a rendered JSON body whose value holds one of secrets as written or
// base64-encoded (a whole config file in a ConfigMap's data counts, as it
// shows whole): the fields a set_sensitive value reached.
func FieldsHolding(body string, secrets []string) ([]string, error) {
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
			if ContainsAny(v, forms) {
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
