// Package objectpath is the one way k8sconnect names a field inside an object, in
// ignore_fields, in managed_state_projection and field_ownership keys, and in
// warnings:
//
//	spec.replicas
//	spec.template.spec.containers[name=app].image    (list-map element by key)
//	spec.ports[port=80,protocol=TCP].targetPort      (several keys, sorted)
//	metadata.labels["app.kubernetes.io/name"]        (a key that is not an identifier)
//	spec.args[0]                                     (list element by index)
//	metadata.finalizers[=example.com/protect]        (set element by value)
//	spec.template.spec.containers[*].image           (every element: ignore_fields, sensitive_fields)
//
// Parse also reads the kubectl JSONPath forms users already write, and renders
// them in the forms above: a filter [?(@.name=='app')] (conditions joined by
// &&) is [name=app], a single-quoted key ['app.kubernetes.io/name'] is
// ["app.kubernetes.io/name"], and a leading $, . or the {...} of a kubectl
// template are dropped.
//
// Paths come either from the user (Parse) or from the server's managedFields
// (FromFieldPath), and both render the same way, so they compare as strings.
package objectpath

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Segment is one step of a path; exactly one of its fields is set.
type Segment struct {
	Field *string
	Keys  []KeyValue // list-map element, sorted by Name
	Value *string    // set element
	Index *int
	Every bool // [*]: every element of a list
}

// element reports whether s selects list elements (rather than a field).
func (s Segment) element() bool { return s.Field == nil }

// Accepted lists the path forms, for error messages.
const Accepted = "accepted forms: spec.replicas; spec.containers[name=app].image or spec.containers[?(@.name=='app')].image; " +
	"spec.ports[port=80,protocol=TCP]; metadata.labels[\"app.kubernetes.io/name\"] or metadata.labels['app.kubernetes.io/name']; " +
	"spec.args[0]; metadata.finalizers[=example.com/protect]; and, where every element is meant (ignore_fields, " +
	"sensitive_fields), spec.containers[*].image"

// KeyValue selects a list-map element by one key field.
type KeyValue struct{ Name, Value string }

// Path is a sequence of segments from the object's root.
type Path []Segment

// Field returns a field-name segment.
func Field(name string) Segment { return Segment{Field: &name} }

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)
var plainValue = regexp.MustCompile(`^[A-Za-z0-9_./:@+-]+$`)

func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.Field != nil:
			if identifier.MatchString(*s.Field) {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(*s.Field)
			} else {
				b.WriteString("[" + quote(*s.Field) + "]")
			}
		case s.Keys != nil:
			parts := make([]string, len(s.Keys))
			for j, kv := range s.Keys {
				parts[j] = kv.Name + "=" + renderKeyValue(kv.Value)
			}
			b.WriteString("[" + strings.Join(parts, ",") + "]")
		case s.Value != nil:
			b.WriteString("[=" + renderKeyValue(*s.Value) + "]")
		case s.Index != nil:
			b.WriteString("[" + strconv.Itoa(*s.Index) + "]")
		case s.Every:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

func renderKeyValue(v string) string {
	if plainValue.MatchString(v) {
		return v
	}
	return quote(v)
}

// HasPrefix reports whether q is p or an ancestor of p. A [*] in q matches any
// element p selects.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i, s := range q {
		if s.Every && p[i].element() {
			continue
		}
		if (Path{p[i]}).String() != (Path{s}).String() {
			return false
		}
	}
	return true
}

// Selects reports whether p has a [*]: it names every element of a list, not
// one value.
func (p Path) Selects() bool {
	for _, s := range p {
		if s.Every {
			return true
		}
	}
	return false
}

// ParseOne is Parse for a path that must name one value (what a wait reads):
// [*] is refused.
func ParseOne(s string) (Path, error) {
	p, err := Parse(s)
	if err == nil && p.Selects() {
		return nil, fmt.Errorf("path %q: [*] names every element, but this path must name one value; choose the "+
			"element with [name=value], [?(@.name=='value')] or [0]", s)
	}
	return p, err
}

// UnderAny reports whether p is one of prefixes or lies under one.
func (p Path) UnderAny(prefixes []Path) bool {
	for _, x := range prefixes {
		if p.HasPrefix(x) {
			return true
		}
	}
	return false
}

// Parse reads a user-written path; errors say where the path went wrong.
func Parse(s string) (Path, error) {
	p, err := parse(s)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, Accepted)
	}
	return p, nil
}

func parse(s string) (Path, error) {
	var p Path
	rest := strings.TrimSpace(s)
	// kubectl's JSONPath: {.spec.replicas}, $.spec.replicas, .spec.replicas.
	if strings.HasPrefix(rest, "{") && strings.HasSuffix(rest, "}") {
		rest = strings.TrimSpace(rest[1 : len(rest)-1])
	}
	rest = strings.TrimPrefix(rest, "$")
	rest = strings.TrimPrefix(rest, ".")
	first := true
	for rest != "" {
		switch {
		case rest[0] == '[':
			end, seg, err := parseBracket(rest)
			if err != nil {
				return nil, fmt.Errorf("path %q: %w", s, err)
			}
			p = append(p, seg)
			rest = rest[end:]
		case rest[0] == '.' && !first:
			rest = rest[1:]
			fallthrough
		default:
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			name := rest[:n]
			if name == "" {
				return nil, fmt.Errorf("path %q has an empty field name", s)
			}
			if !identifier.MatchString(name) {
				return nil, fmt.Errorf("path %q: field %q needs brackets and quotes, like [%s]", s, name, quote(name))
			}
			p = append(p, Field(name))
			rest = rest[n:]
		}
		first = false
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("path is empty")
	}
	return p, nil
}

// parseBracket reads one [...] segment at the start of s and returns its length.
func parseBracket(s string) (int, Segment, error) {
	inner, end, err := scanBracket(s)
	if err != nil {
		return 0, Segment{}, err
	}
	switch {
	case inner == "*":
		return end, Segment{Every: true}, nil
	case strings.HasPrefix(inner, "?"):
		keys, err := parseFilter(inner)
		if err != nil {
			return 0, Segment{}, err
		}
		return end, Segment{Keys: keys}, nil
	case strings.HasPrefix(inner, `"`):
		var name string
		if err := json.Unmarshal([]byte(inner), &name); err != nil {
			return 0, Segment{}, fmt.Errorf("bad quoted field %s", inner)
		}
		return end, Field(name), nil
	case strings.HasPrefix(inner, "'"):
		name, err := unquoteSingle(inner)
		if err != nil {
			return 0, Segment{}, err
		}
		return end, Field(name), nil
	case strings.HasPrefix(inner, "="):
		v, err := unquoteValue(inner[1:])
		if err != nil {
			return 0, Segment{}, err
		}
		return end, Segment{Value: &v}, nil
	case strings.Contains(inner, "="):
		var keys []KeyValue
		for _, part := range splitOutsideQuotes(inner, ',') {
			name, val, ok := strings.Cut(part, "=")
			name = strings.TrimSpace(name)
			if !ok || !identifier.MatchString(name) {
				return 0, Segment{}, fmt.Errorf("bad list selector [%s]: use [key=value] or [key1=v1,key2=v2]", inner)
			}
			v, err := unquoteValue(strings.TrimSpace(val))
			if err != nil {
				return 0, Segment{}, err
			}
			keys = append(keys, KeyValue{Name: name, Value: v})
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
		return end, Segment{Keys: keys}, nil
	default:
		i, err := strconv.Atoi(inner)
		if err != nil || i < 0 {
			return 0, Segment{}, fmt.Errorf("bad selector [%s]: use [0], [name=value] or [\"key\"]", inner)
		}
		return end, Segment{Index: &i}, nil
	}
}

func scanBracket(s string) (inner string, end int, err error) {
	var quote byte // the quote we are inside, or 0
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quote != 0:
			i++
		case quote == 0 && (s[i] == '"' || s[i] == '\''):
			quote = s[i]
		case s[i] == quote:
			quote = 0
		case s[i] == ']' && quote == 0:
			return s[1:i], i + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unclosed [")
}

// parseFilter reads a JSONPath filter, ?(@.key=='value' && @.other==80), as
// the list-map keys it selects by. Only equality on direct fields of the
// element is a selector; anything else is refused rather than guessed at.
func parseFilter(inner string) ([]KeyValue, error) {
	body := strings.TrimSpace(strings.TrimPrefix(inner, "?"))
	if !strings.HasPrefix(body, "(") || !strings.HasSuffix(body, ")") {
		return nil, fmt.Errorf("bad filter [%s]: write [?(@.name=='value')]", inner)
	}
	body = body[1 : len(body)-1]
	var keys []KeyValue
	for _, cond := range splitOutsideQuotesOn(body, "&&") {
		name, val, ok := strings.Cut(cond, "==")
		name = strings.TrimSpace(name)
		if !ok || !strings.HasPrefix(name, "@.") || !identifier.MatchString(name[2:]) {
			return nil, fmt.Errorf("bad filter [%s]: only conditions like @.name=='value', joined by &&, select "+
				"an element", inner)
		}
		v := strings.TrimSpace(val)
		var err error
		switch {
		case strings.HasPrefix(v, "'"):
			v, err = unquoteSingle(v)
		case strings.HasPrefix(v, `"`):
			v, err = unquoteValue(v)
		case v == "":
			err = fmt.Errorf("bad filter [%s]: %s has no value", inner, name)
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, KeyValue{Name: name[2:], Value: v})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	return keys, nil
}

// unquoteSingle reads a JSONPath single-quoted string: 'text', with \' and \\.
func unquoteSingle(q string) (string, error) {
	if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
		return "", fmt.Errorf("bad quoted value %s", q)
	}
	var b strings.Builder
	body := q[1 : len(q)-1]
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '\\' && i+1 < len(body):
			i++
		case body[i] == '\'':
			return "", fmt.Errorf("bad quoted value %s: write a quote inside as \\'", q)
		}
		b.WriteByte(body[i])
	}
	return b.String(), nil
}

// splitOutsideQuotesOn splits s at sep where sep is not inside quotes.
func splitOutsideQuotesOn(s, sep string) []string {
	var parts []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quote != 0:
			i++
		case quote == 0 && (s[i] == '"' || s[i] == '\''):
			quote = s[i]
		case s[i] == quote:
			quote = 0
		case quote == 0 && strings.HasPrefix(s[i:], sep):
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}

func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && inQuote:
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case s[i] == sep && !inQuote:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func unquoteValue(v string) (string, error) {
	if strings.HasPrefix(v, `"`) {
		var out string
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return "", fmt.Errorf("bad quoted value %s", v)
		}
		return out, nil
	}
	if v == "" {
		return "", fmt.Errorf("empty selector value")
	}
	return v, nil
}

// FromFieldPath converts a path from the server's managedFields.
func FromFieldPath(fp fieldpath.Path) Path {
	p := make(Path, 0, len(fp))
	for _, e := range fp {
		switch {
		case e.FieldName != nil:
			p = append(p, Field(*e.FieldName))
		case e.Key != nil:
			keys := make([]KeyValue, 0, len(*e.Key))
			for _, f := range *e.Key {
				keys = append(keys, KeyValue{Name: f.Name, Value: Render(f.Value.Unstructured())})
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
			p = append(p, Segment{Keys: keys})
		case e.Value != nil:
			v := Render((*e.Value).Unstructured())
			p = append(p, Segment{Value: &v})
		case e.Index != nil:
			i := *e.Index
			p = append(p, Segment{Index: &i})
		}
	}
	return p
}

// Render is the display form of a value: strings as they are, everything else
// as JSON, so `3`, `true` and `nginx:1.27` read naturally in a plan.
func Render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// MustParse is Parse for paths written in code.
func MustParse(s string) Path {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}
