package helmchart

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// Values are the user's values, in the order the helm CLI applies them:
// every YAML document (as -f, a later one wins key by key), then every set
// entry (as --set), then every set_list entry (as --set name={a,b}), then
// every set_sensitive entry, then every set_wo entry (the release's
// write-only values, kept nowhere), which therefore wins.
type Values struct {
	Documents    []string
	Set          []Setting
	SetList      []ListSetting
	SetSensitive []Setting
	WriteOnly    []Setting
}

// ListSetting is one set_list entry: the list at Name is Values.
type ListSetting struct {
	Name   string
	Values []string
}

// Setting is one set or set_sensitive entry.
type Setting struct {
	Name  string
	Value string
	// Type is how Value is read: "auto" (or empty) as --set reads it (true,
	// 42 and null become a bool, a number and a null; commas separate
	// entries), "string" as --set-string (always a string), "literal" as
	// --set-literal (the whole text, commas and all, as one string).
	Type string
}

// SettingTypes are the values Setting.Type takes.
var SettingTypes = []string{"auto", "string", "literal"}

// Merge is the values the chart is rendered with, before Helm coalesces them
// with the chart's own defaults. An error names the document or the entry;
// it never quotes a set_sensitive value.
func (v Values) Merge() (map[string]any, error) {
	out := map[string]any{}
	for i, doc := range v.Documents {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("values[%d] is not a YAML map of values: %w", i, err)
		}
		out = loader.MergeMaps(out, m)
	}
	for i, s := range v.Set {
		if err := s.applyTo(out); err != nil {
			return nil, fmt.Errorf("set[%d] (%s): %w", i, s.Name, err)
		}
	}
	for i, s := range v.SetList {
		if err := s.applyTo(out); err != nil {
			return nil, fmt.Errorf("set_list[%d] (%s): %w", i, s.Name, err)
		}
	}
	for i, s := range v.SetSensitive {
		if err := s.applyTo(out); err != nil {
			// Helm's parser may quote the text it failed on, which holds
			// the value: name the entry and its position only.
			return nil, fmt.Errorf("set_sensitive[%d] (%s) could not be parsed as a Helm --set entry; check its name and type", i, s.Name)
		}
	}
	for i, s := range v.WriteOnly {
		if err := s.applyTo(out); err != nil {
			return nil, fmt.Errorf("set_wo[%d] (%s) could not be parsed as a Helm --set entry; check its name and type", i, s.Name)
		}
	}
	return out, nil
}

func (s Setting) applyTo(dest map[string]any) error {
	entry := s.Name + "=" + s.Value
	switch s.Type {
	case "", "auto":
		return strvals.ParseInto(entry, dest)
	case "string":
		return strvals.ParseIntoString(entry, dest)
	case "literal":
		return strvals.ParseLiteralInto(entry, dest)
	}
	return fmt.Errorf("type %q is not one of auto, string, literal", s.Type)
}

// listElement escapes what --set's list syntax reads as the end of an
// element, so that each value is one element, commas and all.
var listElement = strings.NewReplacer(`\`, `\\`, ",", `\,`, "}", `\}`)

// applyTo sets the list as `--set name={a,b}` does, each element read as
// --set reads a value (true, 42 and null become a bool, a number and a
// null); an empty list sets an empty list.
func (s ListSetting) applyTo(dest map[string]any) error {
	if len(s.Values) == 0 {
		// {} would be a list of one empty string: a list of a placeholder
		// is set, found by the path a set of it alone makes, and emptied.
		entry := s.Name + "={" + emptyPlaceholder + "}"
		alone := map[string]any{}
		if err := strvals.ParseInto(entry, alone); err != nil {
			return err
		}
		if err := strvals.ParseInto(entry, dest); err != nil {
			return err
		}
		emptyPlaced(dest, alone)
		return nil
	}
	elems := make([]string, len(s.Values))
	for i, v := range s.Values {
		elems[i] = listElement.Replace(v)
	}
	return strvals.ParseInto(s.Name+"={"+strings.Join(elems, ",")+"}", dest)
}

const emptyPlaceholder = "k8sconnect:empty-list"

// emptyPlaced empties, in dest, the list of emptyPlaceholder that path (the
// values a set of it alone made: one branch from the root to that list)
// leads to.
func emptyPlaced(dest, path any) {
	placeholder := func(v any) bool {
		l, ok := v.([]any)
		return ok && len(l) == 1 && l[0] == emptyPlaceholder
	}
	switch p := path.(type) {
	case map[string]any:
		d, ok := dest.(map[string]any)
		for k, v := range p {
			switch {
			case !ok:
			case placeholder(v):
				d[k] = []any{}
			default:
				emptyPlaced(d[k], v)
			}
		}
	case []any:
		d, ok := dest.([]any)
		for i, v := range p {
			switch {
			case v == nil || !ok || i >= len(d):
			case placeholder(v):
				d[i] = []any{}
			default:
				emptyPlaced(d[i], v)
			}
		}
	}
}

// SensitiveTexts are the set_sensitive and set_wo values as a rendered
// manifest may hold them, for callers that must keep such manifests out of
// plain output.
func (v Values) SensitiveTexts() []string {
	var out []string
	for _, s := range slices.Concat(v.SetSensitive, v.WriteOnly) {
		if s.Value != "" {
			out = append(out, s.Value)
		}
	}
	return out
}

// Scrub hides the set_sensitive and set_wo values in text meant for the user (errors
// and notes), as written and base64-encoded, as a Secret's data holds them:
// Helm's errors may quote a rendered line, and a post-renderer that fails
// may print the objects it was given. Values shorter than
// sensitive.MinScrub are left, as everywhere else.
func (v Values) Scrub(text string) string {
	for _, s := range v.SensitiveTexts() {
		if len(s) >= sensitive.MinScrub {
			text = strings.ReplaceAll(text, s, sensitive.Hidden)
			text = strings.ReplaceAll(text, base64.StdEncoding.EncodeToString([]byte(s)), sensitive.Hidden)
		}
	}
	return text
}
