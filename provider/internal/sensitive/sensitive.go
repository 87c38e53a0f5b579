// Package sensitive is the one place that decides which fields of an object are
// secret and how they are shown instead of their values.
//
// A field is sensitive when it lies under data or stringData of a core v1
// Secret, or under one of the paths a resource's sensitive_fields lists (same
// language as ignore_fields, see objectpath). Everything that renders an
// object's values for a user (managed_state_projection, managed_fields, the
// recorded projection in private state, ownership and drift warnings, wait
// status, logs) asks a Redactor, so no path leaks a value that another path
// hides.
//
// A sensitive value is shown as a keyed hash,
//
//	(sensitive, hmac-sha256:0123456789abcdef)
//
// HMAC-SHA256 keyed by the resource's own id, over the field's path and the
// value. The hash changes when the value changes, so drift is still seen and
// reverted; two resources holding the same value show different hashes, and a
// precomputed table of common values does not apply. The key is not secret (the
// id is in state): the hash hides a value from anyone who reads a plan or a
// log, it does not make a guessable value unguessable.
package sensitive

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/k8sconnect/k8sconnect/provider/internal/largevalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Prefix starts every redacted rendering; IsRedacted recognises it.
const Prefix = "(sensitive"

// Pending is shown while the key is not known yet (a create's plan: the
// resource id is generated at apply). Callers that build Terraform values turn
// it into an unknown value.
const Pending = "(sensitive, known after apply)"

// LastAppliedAnnotation is kubectl's copy of what it applied last: for a
// Secret it holds every value, so readers of a Secret drop or redact it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Hidden is the text warnings and errors show in place of a sensitive value.
const Hidden = "(sensitive value hidden)"

var (
	secretData       = objectpath.Path{objectpath.Field("data")}
	secretStringData = objectpath.Path{objectpath.Field("stringData")}
)

// Redactor renders an object's values, hiding the sensitive ones. The zero
// Redactor still hides a Secret's data (as Pending): no caller can forget it.
type Redactor struct {
	key   string
	extra []objectpath.Path
	all   bool // every field: the sensitive paths are not known yet
	// also are values that scrubs hide besides those of the objects they
	// are given (Also).
	also []string
}

// Also is r whose scrubs (Scrub, ScrubDiagnostics) hide values as well: the
// values of a write-only input, every one of them secret whatever its path.
func (r Redactor) Also(values []string) Redactor {
	r.also = append(append([]string(nil), r.also...), values...)
	return r
}

// Leaves are the values v holds, rendered as the projections render them:
// every string, number and boolean in it, at any depth.
func Leaves(v any) []string {
	var out []string
	collect(v, &out)
	return out
}

// Unknown is the redactor while a resource's sensitive_fields is unknown (it
// comes from something not yet created): every value is Pending.
func Unknown() Redactor { return Redactor{all: true} }

// New returns the redactor of one resource: key is its id ("" while unknown),
// extra the paths its sensitive_fields lists.
func New(key string, extra []objectpath.Path) Redactor {
	return Redactor{key: key, extra: extra}
}

// IsSecret reports whether apiVersion and kind name a core v1 Secret.
func IsSecret(apiVersion, kind string) bool {
	return apiVersion == "v1" && kind == "Secret"
}

// Paths are the sensitive prefixes of an object of this apiVersion and kind.
func (r Redactor) Paths(apiVersion, kind string) []objectpath.Path {
	out := append([]objectpath.Path(nil), r.extra...)
	if IsSecret(apiVersion, kind) {
		out = append(out, secretData, secretStringData)
	}
	return out
}

// Sensitive reports whether path p of obj (an unstructured object, which names
// its own apiVersion and kind) is, or lies under, a sensitive field.
func (r Redactor) Sensitive(obj map[string]any, p objectpath.Path) bool {
	if r.all {
		return true
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	for _, s := range r.Paths(apiVersion, kind) {
		if p.HasPrefix(s) {
			return true
		}
	}
	return false
}

// Any reports whether an object of this kind has sensitive fields at all.
func (r Redactor) Any(apiVersion, kind string) bool {
	return r.all || len(r.Paths(apiVersion, kind)) > 0
}

// Render is objectpath.Render for the value v at path p of obj as the
// projections show it: the value itself, its keyed hash when the field is
// sensitive, or its digest when it is too large to keep twice (package
// largevalue).
func (r Redactor) Render(obj map[string]any, p objectpath.Path, v any) string {
	rendered := objectpath.Render(v)
	if !r.Sensitive(obj, p) {
		return largevalue.Of(rendered)
	}
	return r.Hash(p.String(), rendered)
}

// Name is p as users see it: p.String(), except that a value which selects a
// list element (a set element's value, a list-map element's key values) is
// shown as its keyed hash when that element lies under a sensitive field. A
// set of API keys under sensitive_fields would otherwise print every key in
// the names of managed_state_projection and field_ownership. Resolve turns a
// Name back into the path it names.
func (r Redactor) Name(obj map[string]any, p objectpath.Path) string {
	var out objectpath.Path
	for i, s := range p {
		if (s.Value == nil && s.Keys == nil) || !r.Sensitive(obj, p[:i+1]) {
			continue
		}
		if out == nil {
			out = append(objectpath.Path(nil), p...)
		}
		out[i] = r.hashSegment(p[:i], s)
	}
	if out == nil {
		return p.String()
	}
	return out.String()
}

// Selectable is the longest part of a name that a user can write in
// ignore_fields: the name up to its first hashed selector (the list that holds
// the sensitive element), since a hash selects nothing in a path a user writes.
func Selectable(name string) string {
	p, err := objectpath.Parse(name)
	if err != nil {
		return name
	}
	for i, s := range p {
		if redactedSelector(s) {
			return p[:i].String()
		}
	}
	return name
}

// hashSegment is s with its selecting values hashed; the hash covers the
// element's parent path and the key's name, so equal values in different
// lists or keys hash differently.
func (r Redactor) hashSegment(parent objectpath.Path, s objectpath.Segment) objectpath.Segment {
	where := parent.String()
	if s.Value != nil {
		h := r.Hash(where+"[=]", *s.Value)
		return objectpath.Segment{Value: &h}
	}
	keys := make([]objectpath.KeyValue, len(s.Keys))
	for j, kv := range s.Keys {
		keys[j] = objectpath.KeyValue{Name: kv.Name, Value: r.Hash(where+"["+kv.Name+"=]", kv.Value)}
	}
	return objectpath.Segment{Keys: keys}
}

// Resolve parses a path that Name rendered from obj: hashed selectors are
// matched against the elements obj holds. A hash no element of obj matches
// (the element is gone) resolves to a path that Get does not find.
func (r Redactor) Resolve(obj map[string]any, name string) (objectpath.Path, error) {
	p, err := objectpath.Parse(name)
	if err != nil || r.key == "" || r.all {
		return p, err // pending hashes are all alike: nothing to match
	}
	for i, s := range p {
		if !redactedSelector(s) {
			continue
		}
		list, _ := p[:i].Get(obj)
		elems, _ := list.([]any)
		for _, e := range elems {
			found, ok := selectorOf(e, s)
			if ok && (objectpath.Path{r.hashSegment(p[:i], found)}).String() == (objectpath.Path{s}).String() {
				p[i] = found
				break
			}
		}
	}
	return p, nil
}

func redactedSelector(s objectpath.Segment) bool {
	if s.Value != nil {
		return IsRedacted(*s.Value)
	}
	for _, kv := range s.Keys {
		if IsRedacted(kv.Value) {
			return true
		}
	}
	return false
}

// selectorOf is the segment that selects element e the way s does (by value,
// or by the same key names).
func selectorOf(e any, s objectpath.Segment) (objectpath.Segment, bool) {
	if s.Value != nil {
		v := objectpath.Render(e)
		return objectpath.Segment{Value: &v}, true
	}
	m, ok := e.(map[string]any)
	if !ok {
		return objectpath.Segment{}, false
	}
	keys := make([]objectpath.KeyValue, len(s.Keys))
	for j, kv := range s.Keys {
		v, ok := m[kv.Name]
		if !ok {
			return objectpath.Segment{}, false
		}
		keys[j] = objectpath.KeyValue{Name: kv.Name, Value: objectpath.Render(v)}
	}
	return objectpath.Segment{Keys: keys}, true
}

// Hash is the keyed hash shown for the value rendered at path.
func (r Redactor) Hash(path, rendered string) string {
	if r.key == "" || r.all {
		return Pending
	}
	m := hmac.New(sha256.New, []byte("k8sconnect/sensitive/v1\x00"+r.key))
	m.Write([]byte(path))
	m.Write([]byte{0})
	m.Write([]byte(rendered))
	return "(sensitive, hmac-sha256:" + hex.EncodeToString(m.Sum(nil))[:16] + ")"
}

// IsRedacted reports whether s is a rendering made by this package.
func IsRedacted(s string) bool { return strings.HasPrefix(s, Prefix) }

// Values lists the sensitive values of obj as text could contain them: each
// string leaf under a sensitive path, and for a Secret's data also the decoded
// value. Scrub uses them.
func (r Redactor) Values(obj map[string]any) []string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	var out []string
	for _, sp := range r.Paths(apiVersion, kind) {
		for _, p := range sp.Expand(obj) {
			if v, ok := p.Get(obj); ok {
				collect(v, &out)
			}
		}
	}
	if IsSecret(apiVersion, kind) {
		if data, ok := obj["data"].(map[string]any); ok {
			for _, v := range data {
				if s, ok := v.(string); ok {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						out = append(out, string(b))
					}
				}
			}
		}
	}
	return out
}

func collect(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			collect(e, out)
		}
	case []any:
		for _, e := range t {
			collect(e, out)
		}
	case nil:
	default:
		*out = append(*out, objectpath.Render(t))
	}
}

// Scrub replaces every sensitive value of the given objects that occurs in
// text (an API server's error, say) with Hidden. Longer values are replaced
// first, so a value that contains another is hidden whole. Values shorter than
// MinScrub characters are left: replacing every "a" or "1" would make the text
// unreadable while hiding next to nothing.
func (r Redactor) Scrub(text string, objs ...map[string]any) string {
	return scrubValues(text, r.scrubbed(objs))
}

// scrubbed is the sensitive values of objs, longest first, so that a value
// that contains another is hidden whole.
func (r Redactor) scrubbed(objs []map[string]any) []string {
	values := append([]string(nil), r.also...)
	for _, o := range objs {
		if o != nil {
			values = append(values, r.Values(o)...)
		}
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	return values
}

func scrubValues(text string, values []string) string {
	for _, v := range values {
		if len(v) >= MinScrub {
			text = strings.ReplaceAll(text, v, Hidden)
		}
	}
	return text
}

// MinScrub is the shortest value searched for and hidden in text.
const MinScrub = 3
