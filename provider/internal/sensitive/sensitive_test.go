package sensitive

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/largevalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

func secret(data map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": data}
}

func TestSecretDataIsSensitiveOtherFieldsAreNot(t *testing.T) {
	r := New("id1", nil)
	obj := secret(map[string]any{"password": "aHVudGVyMg=="})
	for p, want := range map[string]bool{
		"data.password": true, "stringData.token": true, "data": true,
		"metadata.name": false, "type": false, `metadata.labels["data"]`: false,
	} {
		if got := r.Sensitive(obj, objectpath.MustParse(p)); got != want {
			t.Errorf("Sensitive(%s) = %v, want %v", p, got, want)
		}
	}
	// Only core v1 Secrets: a CRD called Secret in another group is not.
	crd := map[string]any{"apiVersion": "example.com/v1", "kind": "Secret"}
	if r.Sensitive(crd, objectpath.MustParse("data.password")) {
		t.Error("example.com/v1 Secret treated as a core Secret")
	}
	extra := New("id1", []objectpath.Path{objectpath.MustParse("spec.credentials")})
	if !extra.Sensitive(crd, objectpath.MustParse("spec.credentials.password")) || extra.Sensitive(crd, objectpath.MustParse("spec.user")) {
		t.Error("sensitive_fields prefix rule")
	}
}

func TestHashIsKeyedAndChangesWithTheValue(t *testing.T) {
	obj := secret(nil)
	p := objectpath.MustParse("data.password")
	a := New("resource-a", nil)
	b := New("resource-b", nil)
	v := base64.StdEncoding.EncodeToString([]byte("hunter2"))
	ha := a.Render(obj, p, v)
	if !strings.HasPrefix(ha, "(sensitive, hmac-sha256:") || len(ha) != len("(sensitive, hmac-sha256:)")+16 {
		t.Fatalf("rendering %q", ha)
	}
	if strings.Contains(ha, v) || strings.Contains(ha, "hunter2") {
		t.Fatalf("rendering holds the value: %q", ha)
	}
	if ha != a.Render(obj, p, v) {
		t.Error("hash not deterministic")
	}
	if ha == b.Render(obj, p, v) {
		t.Error("two resources hash the same value the same way")
	}
	if ha == a.Render(obj, objectpath.MustParse("data.other"), v) {
		t.Error("two paths hash the same value the same way")
	}
	if ha == a.Render(obj, p, base64.StdEncoding.EncodeToString([]byte("hunter3"))) {
		t.Error("hash does not change with the value")
	}
	if got := New("", nil).Render(obj, p, v); got != Pending {
		t.Errorf("no key: %q, want %q", got, Pending)
	}
	if got := (Redactor{}).Render(obj, p, v); got != Pending {
		t.Errorf("zero redactor leaks: %q", got)
	}
	if got := a.Render(obj, objectpath.MustParse("type"), "Opaque"); got != "Opaque" {
		t.Errorf("non-sensitive value rendered as %q", got)
	}
	if !IsRedacted(ha) || !IsRedacted(Pending) || IsRedacted("Opaque") {
		t.Error("IsRedacted")
	}
}

func TestUnknownSensitiveFieldsHideEverything(t *testing.T) {
	r := Unknown()
	if got := r.Render(map[string]any{"kind": "ConfigMap", "apiVersion": "v1"}, objectpath.MustParse("data.a"), "x"); got != Pending {
		t.Errorf("got %q", got)
	}
}

func TestScrubHidesEncodedAndDecodedValues(t *testing.T) {
	obj := secret(map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("hunter2-long")), "pin": "MTI="})
	obj["stringData"] = map[string]any{"token": "tok-abc-123"}
	r := New("k", nil)
	in := `Secret "s" is invalid: hunter2-long, aHVudGVyMi1sb25n and tok-abc-123 and tok-abc-1234; 12 is too short to hide`
	got := r.Scrub(in, obj)
	for _, v := range []string{"hunter2-long", "aHVudGVyMi1sb25n", "tok-abc-123"} {
		if strings.Contains(got, v) {
			t.Errorf("scrubbed text still holds %q: %s", v, got)
		}
	}
	if !strings.Contains(got, "12 is too short") {
		t.Errorf("short value scrubbed: %s", got)
	}
	var diags diag.Diagnostics
	diags.AddAttributeError(path.Root("yaml_body"), "rejected", in)
	diags.AddWarning("w", "no secret here")
	r.ScrubDiagnostics(&diags, obj)
	if strings.Contains(diags[0].Detail(), "tok-abc-123") || diags[0].Severity() != diag.SeverityError {
		t.Errorf("diagnostic not scrubbed: %v", diags[0])
	}
	if wp, ok := diags[0].(diag.DiagnosticWithPath); !ok || !wp.Path().Equal(path.Root("yaml_body")) {
		t.Error("path lost")
	}
	if diags[1].Detail() != "no secret here" {
		t.Error("clean diagnostic changed")
	}
}

// A plan changes its object after it defers the scrub (the namespace, the
// owner's annotation): the values to hide are those the object held when the
// scrub was deferred, and a value added later is not among them.
func TestScrubDiagnosticsLaterHidesTheValuesHeldWhenDeferred(t *testing.T) {
	obj := secret(map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("hunter2-long"))})
	var diags diag.Diagnostics
	scrub := New("k", nil).ScrubDiagnosticsLater(&diags, obj)
	obj["data"] = map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("changed-later"))}
	diags.AddError("rejected", "hunter2-long and changed-later")
	scrub()
	if got := diags[0].Detail(); strings.Contains(got, "hunter2-long") || !strings.Contains(got, "changed-later") {
		t.Errorf("scrubbed detail %q: want the value held when deferred hidden, and only that", got)
	}
}

func TestNameHidesSelectorsUnderSensitiveFieldsAndResolvesBack(t *testing.T) {
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Database", "spec": map[string]any{
		"apiKeys": []any{"key-one", "key-two"},
		"grants":  []any{map[string]any{"token": "tok-1", "scope": "read"}},
		"tags":    []any{"public"},
	}}
	r := New("id1", []objectpath.Path{objectpath.MustParse("spec.apiKeys"), objectpath.MustParse("spec.grants")})
	for _, raw := range []string{"spec.apiKeys[=key-two]", "spec.grants[token=tok-1].scope"} {
		p := objectpath.MustParse(raw)
		name := r.Name(obj, p)
		if strings.Contains(name, "key-two") || strings.Contains(name, "tok-1") || !strings.Contains(name, "hmac-sha256:") {
			t.Errorf("Name(%s) = %s: the selector should be a keyed hash", raw, name)
		}
		back, err := r.Resolve(obj, name)
		if err != nil || back.String() != raw {
			t.Errorf("Resolve(%s) = %s, %v; want %s", name, back, err, raw)
		}
		if other := New("id2", r.extra).Name(obj, p); other == name {
			t.Errorf("names of %s under two resources are equal: the hash is not keyed", raw)
		}
	}
	// Outside sensitive_fields a selector is shown as it is.
	if got := r.Name(obj, objectpath.MustParse("spec.tags[=public]")); got != "spec.tags[=public]" {
		t.Errorf("Name of a plain set element = %s", got)
	}
	// An element that is gone resolves to a path that finds nothing.
	name := r.Name(obj, objectpath.MustParse("spec.apiKeys[=key-gone]"))
	if p, err := r.Resolve(obj, name); err != nil {
		t.Fatal(err)
	} else if _, ok := p.Get(obj); ok {
		t.Errorf("Resolve of a removed element found %s", p)
	}
	// Before the key is known every hash is pending: nothing to resolve.
	pending := New("", r.extra)
	if name := pending.Name(obj, objectpath.MustParse("spec.apiKeys[=key-one]")); !strings.Contains(name, Pending) {
		t.Errorf("pending name = %s", name)
	}
}

func TestRedactSetHidesSelectorsAndResolvesAgainstTheObject(t *testing.T) {
	obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Database", "spec": map[string]any{
		"apiKeys": []any{"key-one"},
		"grants":  []any{map[string]any{"token": "tok-1", "scope": "read"}},
	}}
	set := &fieldpath.Set{}
	if err := set.FromJSON(strings.NewReader(`{"f:spec":{"f:apiKeys":{"v:\"key-one\"":{},"v:\"key-gone\"":{}},` +
		`"f:grants":{"k:{\"token\":\"tok-1\"}":{".":{},"f:scope":{},"f:token":{}}}}}`)); err != nil {
		t.Fatal(err)
	}
	r := New("id1", []objectpath.Path{objectpath.MustParse("spec.apiKeys"), objectpath.MustParse("spec.grants")})
	redacted, err := r.RedactSet(obj, set).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"key-one", "key-gone", "tok-1"} {
		if strings.Contains(string(redacted), v) {
			t.Errorf("redacted set holds %q: %s", v, redacted)
		}
	}
	back := &fieldpath.Set{}
	if err := back.FromJSON(strings.NewReader(string(redacted))); err != nil {
		t.Fatal(err)
	}
	resolved, _ := r.ResolveSet(obj, back).ToJSON()
	// key-gone is no longer in the object: it resolves to nothing.
	want := `{"f:spec":{"f:apiKeys":{"v:\"key-one\"":{}},"f:grants":{"k:{\"token\":\"tok-1\"}":{".":{},"f:scope":{},"f:token":{}}}}}`
	if string(resolved) != want {
		t.Errorf("resolved set\n got %s\nwant %s", resolved, want)
	}
}

// A value too large to keep twice is shown by its length and digest, but a
// Secret's, however large, keeps its keyed hash: a plain SHA-256 of a secret
// would let anyone holding the state test guesses against it.
func TestRenderLargeValues(t *testing.T) {
	large := strings.Repeat("x", largevalue.Threshold+1)
	r := New("k", nil)
	p := objectpath.MustParse("data.big")
	if got := r.Render(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}, p, large); !largevalue.Is(got) {
		t.Errorf("a large ConfigMap value renders as %.60q, want its length and digest", got)
	}
	got := r.Render(secret(map[string]any{"big": large}), p, large)
	if largevalue.Is(got) || !strings.HasPrefix(got, "(sensitive, hmac-sha256:") {
		t.Errorf("a large Secret value renders as %.60q, want its keyed hash", got)
	}
}
