package managedfields

import (
	"fmt"
	"strconv"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ParseSet reads a field set in managedFields' FieldsV1 encoding, keeping
// every digit of the numbers in list-map keys ("k:{"port":9007199254740993}")
// and set values ("v:9223372036854775807").
//
// fieldpath.Set.FromJSON reads those numbers through a float64 (jsoniter), so
// a key beyond 2^53 comes back as another number: the field then matches no
// element of the live list, drops out of the projection, and its drift is
// never seen. Numbers here are decoded as the API server decodes objects:
// int64 when they fit, float64 otherwise. The set is built with Insert, so it
// is the same set FromJSON builds, with exact keys.
func ParseSet(raw []byte) (*fieldpath.Set, error) {
	var root map[string]any
	if err := utiljson.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	s := fieldpath.NewSet()
	if err := readNode(root, nil, s); err != nil {
		return nil, err
	}
	return s, nil
}

// readNode adds the members under node, whose path is prefix. A child that is
// an empty object, or holds the "." marker, is itself a member.
func readNode(node map[string]any, prefix fieldpath.Path, s *fieldpath.Set) error {
	for k, v := range node {
		if k == "." {
			continue
		}
		pe, err := pathElement(k)
		if err != nil {
			return err
		}
		child, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("field set entry %q is not an object", k)
		}
		p := append(append(make(fieldpath.Path, 0, len(prefix)+1), prefix...), pe)
		if _, marked := child["."]; marked || len(child) == 0 {
			s.Insert(p)
		}
		if err := readNode(child, p, s); err != nil {
			return err
		}
	}
	return nil
}

func pathElement(k string) (fieldpath.PathElement, error) {
	kind, rest, ok := strings.Cut(k, ":")
	if !ok {
		return fieldpath.PathElement{}, fmt.Errorf("field set entry %q has no type prefix", k)
	}
	switch kind {
	case "f":
		return fieldpath.PathElement{FieldName: &rest}, nil
	case "i":
		i, err := strconv.Atoi(rest)
		if err != nil {
			return fieldpath.PathElement{}, fmt.Errorf("field set entry %q: %w", k, err)
		}
		return fieldpath.PathElement{Index: &i}, nil
	case "v":
		var v any
		if err := utiljson.Unmarshal([]byte(rest), &v); err != nil {
			return fieldpath.PathElement{}, fmt.Errorf("field set entry %q: %w", k, err)
		}
		val := value.NewValueInterface(v)
		return fieldpath.PathElement{Value: &val}, nil
	case "k":
		var m map[string]any
		if err := utiljson.Unmarshal([]byte(rest), &m); err != nil {
			return fieldpath.PathElement{}, fmt.Errorf("field set entry %q: %w", k, err)
		}
		fields := make(value.FieldList, 0, len(m))
		for name, v := range m {
			fields = append(fields, value.Field{Name: name, Value: value.NewValueInterface(v)})
		}
		fields.Sort()
		return fieldpath.PathElement{Key: &fields}, nil
	}
	return fieldpath.PathElement{}, fmt.Errorf("field set entry %q has an unknown type prefix", k)
}
