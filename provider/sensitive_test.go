package provider

import "testing"

// A body is a Secret's whether it is written as YAML or as the JSON the data
// sources hand out; one that cannot be read counts as a Secret's.
func TestHoldsSecrets(t *testing.T) {
	for body, want := range map[string]bool{
		"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n":             true,
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`:     true,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n":          false,
		`{"apiVersion":"v1","kind":"ConfigMap","data":{"kind":"Secret"}}`: false,
		`{"apiVersion":"example.com/v1","kind":"Secret","metadata":{}}`:   false,
		`{"apiVersion":"v1","kind":"Secret"`:                              true,
		"apiVersion: v1\nkind: [Secret\n":                                 true,
	} {
		if got := HoldsSecrets(body, false); got != want {
			t.Errorf("HoldsSecrets(%q) = %v, want %v", body, got, want)
		}
	}
	if !HoldsSecrets(`{"apiVersion":"v1","kind":"ConfigMap"}`, true) {
		t.Error("a body with sensitive_fields holds secrets")
	}
}

// A set's body holds a Secret when any of its documents is one, or any item
// of a List; one that cannot be read counts as holding one.
func TestSetHoldsSecrets(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
	for body, want := range map[string]bool{
		cm + "---\n" + cm: false,
		cm + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n":              true,
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n":    true,
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n": false,
		cm + "---\napiVersion: v1\nkind: [Secret\n":                                                      true,
	} {
		if got := SetHoldsSecrets(body); got != want {
			t.Errorf("SetHoldsSecrets(%q) = %v, want %v", body, got, want)
		}
	}
}
