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

// MinNameSecret is the shortest set_sensitive value an object's key is
// refused for holding. A shorter one ("admin", "web") is found in names by
// chance, and refusing the chart's own names would leave the user no way out;
// a value this long in a name was put there by the template.
const MinNameSecret = 8

// SecretInName is the error for an object whose key holds a set_sensitive
// value. It names no key: the key is what holds the value.
const SecretInName = "the name of an object the chart renders holds a set_sensitive value; keys are never " +
	"sensitive, so pass that value with set instead, or name the object otherwise"

// WriteOnlyInName is SecretInName for a set_wo value.
const WriteOnlyInName = "the name of an object the chart renders holds a set_wo value; keys are kept in state and " +
	"shown in plans, so pass that value with set instead, or name the object otherwise"

// NameHoldsSecret reports whether an object's key (its namespace and name
// among its parts) holds one of secrets of MinNameSecret characters or more.
func NameHoldsSecret(key string, secrets []string) bool {
	for _, s := range secrets {
		if len(s) >= MinNameSecret && strings.Contains(key, s) {
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
