// Package kubejson is the one place where text a user wrote (yaml_body, a patch,
// a JSON Patch's operations) becomes values to send to the API server.
//
// It decodes exactly as kubectl does, so what reaches the cluster is what
// `kubectl apply` of the same text would send: the text is converted to JSON
// (k8s.io/apimachinery's yaml.ToJSON: JSON passes through as it is, YAML is read
// with YAML 1.1 rules by sigs.k8s.io/yaml), then decoded with apimachinery's
// number-preserving JSON decoder: an integer that fits int64 stays an int64,
// any other number is a float64. Decoding YAML straight into map[string]any
// (sigs.k8s.io/yaml.Unmarshal, encoding/json) turns every number into a float64
// and silently rounds integers beyond 2^53: 9007199254740993 would be sent as
// 9007199254740992 and int64's maximum as 9223372036854775808, which is not
// even an int64. Values decoded here marshal back (encoding/json) to the same
// digits kubectl sends.
package kubejson

import (
	"errors"
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// ToJSON converts YAML (or JSON, passed through) to JSON the way kubectl reads a
// file (k8s.io/apimachinery's yaml.ToJSON), except that a mapping key given
// twice is an error: the last value silently winning would apply something
// other than what the user reads first. A key a YAML merge (<<) brings in and
// the mapping then overrides is not a duplicate; yaml.v3's node tree tells
// the two apart, go-yaml v2's strict mode does not, so v3 checks and v2
// converts.
func ToJSON(text []byte) ([]byte, error) {
	if utilyaml.IsJSONBuffer(text) {
		return text, nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(text, &root); err != nil {
		// Not YAML to v3: the conversion, kubectl's reader, says why.
		return utilyaml.ToJSON(text)
	}
	if err := DuplicateKeys(&root); err != nil {
		return nil, err
	}
	return CheckedToJSON(text)
}

// CheckedToJSON is ToJSON for text whose yaml.v3 tree the caller has parsed
// and DuplicateKeys has passed, which saves reading large text twice.
func CheckedToJSON(text []byte) ([]byte, error) {
	if utilyaml.IsJSONBuffer(text) {
		return text, nil
	}
	return utilyaml.ToJSON(text)
}

// DuplicateKeys reports every mapping in the tree that gives a key twice, as
// yaml.v3 reports them when it decodes: keys of the same kind and value.
// A merge's keys are not the mapping's own, so they never count.
func DuplicateKeys(root *yamlv3.Node) error {
	var found []string
	var walk func(n *yamlv3.Node)
	walk = func(n *yamlv3.Node) {
		if n == nil || n.Kind == yamlv3.AliasNode {
			return // checked where its anchor is
		}
		if n.Kind == yamlv3.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				for j := i + 2; j+1 < len(n.Content); j += 2 {
					if a, b := n.Content[i], n.Content[j]; a.Kind == b.Kind && a.Value == b.Value {
						found = append(found, fmt.Sprintf("line %d: mapping key %q already defined at line %d", b.Line, b.Value, a.Line))
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	if len(found) > 0 {
		return errors.New(strings.Join(found, "; "))
	}
	return nil
}

// Unmarshal decodes YAML or JSON into v (typically *map[string]any, *[]any or
// *any) with numbers as int64 when they fit and float64 otherwise.
func Unmarshal(text []byte, v any) error {
	j, err := ToJSON(text)
	if err != nil {
		return err
	}
	return utiljson.Unmarshal(j, v)
}
