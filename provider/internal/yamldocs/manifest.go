package yamldocs

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// Manifest is one Kubernetes object found in a document.
type Manifest struct {
	Document
	APIVersion string
	Kind       string
	Namespace  string // as written; empty for cluster-scoped kinds or when left to the default
	Name       string
	// CRD is set when the manifest is a CustomResourceDefinition, so the scope
	// of the kind it defines is known without a cluster.
	CRD *CRD
	// Body is the object as the data sources hand it out: compact JSON (see
	// jsonBody). Split sets it.
	Body string
}

// CRD is what a CustomResourceDefinition says about the kind it defines.
type CRD struct {
	Group      string
	Kind       string
	Namespaced bool
}

// GroupKind is the manifest's API group and kind; scope does not depend on the version.
func (m Manifest) GroupKind() schema.GroupKind {
	return schema.FromAPIVersionAndKind(m.APIVersion, m.Kind).GroupKind()
}

// Key is the manifest's stable identifier:
//
//	<group>/<Kind>/<namespace>/<name>   when metadata.namespace is set
//	<group>/<Kind>/<name>               when it is not
//
// where <group> is the API group, or "core" for the core group (apiVersion: v1),
// e.g. "apps/Deployment/prod/web", "core/ConfigMap/prod/settings",
// "core/Namespace/prod", "rbac.authorization.k8s.io/ClusterRole/reader".
//
// The version is left out so moving a manifest from v1beta1 to v1 keeps its key
// (it is the same object to the API server), and the position in the source is
// left out so reordering documents never changes a for_each key. Kubernetes names
// cannot contain "/", so the number of parts tells whether a namespace is there,
// and "core" cannot clash with a CRD group, which must contain a dot.
func (m Manifest) Key() string {
	return Key(m.GroupKind(), m.Namespace, m.Name)
}

// Key is the key of the object of group and kind gk named name in namespace
// (empty for none): see Manifest.Key.
func Key(gk schema.GroupKind, namespace, name string) string {
	group := gk.Group
	if group == "" {
		group = "core"
	}
	if namespace == "" {
		return group + "/" + gk.Kind + "/" + name
	}
	return group + "/" + gk.Kind + "/" + namespace + "/" + name
}

var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// Parse reads the objects in one document: none for an empty or comment-only
// document, one for an object, or the items of a `kind: List`.
func Parse(doc Document) ([]Manifest, error) {
	if !HasContent(doc.Text) {
		return nil, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc.Text), &root); err != nil {
		return nil, fmt.Errorf("%s is not valid YAML: %s", doc.Where(), fileLines(err, doc))
	}
	// A key given twice anywhere is refused before anything is read: it
	// would leave the object's identity, or a value, ambiguous.
	if err := kubejson.DuplicateKeys(&root); err != nil {
		return nil, fmt.Errorf("%s is not valid YAML: %s", doc.Where(), fileLines(err, doc))
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	node := root.Content[0]
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil, nil // "~" or "null" alone: an empty document, as kubectl treats it
	}
	m, err := parseObject(doc, node)
	if err != nil {
		return nil, err
	}
	if m.APIVersion == "v1" && m.Kind == "List" {
		return parseList(doc, node)
	}
	return []Manifest{m}, nil
}

func parseObject(doc Document, node *yaml.Node) (Manifest, error) {
	m := Manifest{Document: doc}
	if node.Kind != yaml.MappingNode {
		return m, fmt.Errorf("%s is a YAML %s, not an object with apiVersion, kind and metadata", doc.Where(), nodeKind(node))
	}
	// The few identifying fields are read off the node tree directly: errors can
	// then name the field and its line in the user's terms, and nothing else of
	// a large object is decoded.
	f := fields{doc: doc}
	m.APIVersion = f.str(node, "apiVersion")
	m.Kind = f.str(node, "kind")
	meta := f.mapping(node, "metadata")
	m.Name = f.str(meta, "metadata.name")
	m.Namespace = f.str(meta, "metadata.namespace")
	generateName := f.str(meta, "metadata.generateName")
	if f.err != nil {
		return m, f.err
	}
	if m.APIVersion == "v1" && m.Kind == "List" {
		return m, nil
	}
	var missing []string
	if m.APIVersion == "" {
		missing = append(missing, "apiVersion")
	}
	if m.Kind == "" {
		missing = append(missing, "kind")
	}
	if m.Name == "" {
		if generateName != "" {
			return m, fmt.Errorf("%s uses metadata.generateName; give it a fixed metadata.name, which its key and k8sconnect_object need to find the object again", doc.Where())
		}
		missing = append(missing, "metadata.name")
	}
	if len(missing) > 0 {
		return m, fmt.Errorf("%s is missing %s", doc.Where(), strings.Join(missing, ", "))
	}
	if m.GroupKind() == crdGroupKind {
		spec := f.mapping(node, "spec")
		crd := &CRD{Group: f.str(spec, "spec.group"), Kind: f.str(f.mapping(spec, "spec.names"), "spec.names.kind")}
		scope := f.str(spec, "spec.scope")
		if f.err != nil {
			return m, f.err
		}
		if crd.Group == "" || crd.Kind == "" {
			return m, fmt.Errorf("%s is a CustomResourceDefinition without spec.group or spec.names.kind", doc.Where())
		}
		switch scope {
		case "Namespaced", "Cluster":
		default:
			return m, fmt.Errorf("%s is a CustomResourceDefinition whose spec.scope is %q; it must be Namespaced or Cluster", doc.Where(), scope)
		}
		crd.Namespaced = scope == "Namespaced"
		m.CRD = crd
	}
	return m, nil
}

// fields reads fields of mapping nodes, keeping the first problem.
type fields struct {
	doc Document
	err error
}

// get returns the value of a field in a mapping (nil if absent or null),
// following an alias. Parse has refused a key given twice, so there is one.
// path names the field from the document's root; its last part is the key.
func (f *fields) get(m *yaml.Node, path string) *yaml.Node {
	if m == nil || f.err != nil {
		return nil
	}
	key := path[strings.LastIndexByte(path, '.')+1:]
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value == key && k.Kind == yaml.ScalarNode {
			v = m.Content[i+1]
			break
		}
	}
	for v != nil && v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	if v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	return v
}

func (f *fields) str(m *yaml.Node, path string) string {
	v := f.get(m, path)
	if v == nil {
		return ""
	}
	if v.Kind != yaml.ScalarNode {
		f.fail(v, path, "a string")
		return ""
	}
	return v.Value
}

func (f *fields) mapping(m *yaml.Node, path string) *yaml.Node {
	v := f.get(m, path)
	if v != nil && v.Kind != yaml.MappingNode {
		f.fail(v, path, "a mapping")
		return nil
	}
	return v
}

func (f *fields) fail(v *yaml.Node, path, want string) {
	f.err = fmt.Errorf("%s: line %d: %s must be %s, not a YAML %s", f.doc.Where(), f.doc.Line+v.Line-1, path, want, nodeKind(v))
}

// parseList expands `kind: List`, which kubectl accepts and `kubectl get -o yaml`
// writes, into its items. Each item's text is cut from the document as written
// (see itemTexts), so it reads exactly as kubectl reads the List; an item that
// cannot be cut out (flow style) is re-encoded from its node, which keeps its
// comments.
func parseList(doc Document, list *yaml.Node) ([]Manifest, error) {
	var items *yaml.Node
	for i := 0; i+1 < len(list.Content); i += 2 {
		if list.Content[i].Value == "items" {
			items = list.Content[i+1]
		}
	}
	if items == nil || (items.Kind == yaml.ScalarNode && items.Tag == "!!null") {
		return nil, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s is a List whose items is a YAML %s, not a sequence", doc.Where(), nodeKind(items))
	}
	raw := itemTexts(doc.Text, list, items)
	out := make([]Manifest, 0, len(items.Content))
	for i, item := range items.Content {
		text := raw[i]
		if text == "" {
			b, err := yaml.Marshal(item)
			if err != nil {
				return nil, fmt.Errorf("%s item %d: %w", doc.Where(), i+1, err)
			}
			text = string(b)
		}
		d := doc
		d.Item, d.Line, d.Text = i+1, doc.Line+item.Line-1, text
		m, err := parseObject(d, item)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// itemTexts cuts each block-style item of a List out of the document's text and
// removes its indentation, so the item reads as written: re-encoding an item
// from its node (go.yaml.in/yaml/v3) can change what kubectl (which reads YAML
// with sigs.k8s.io/yaml) sees, e.g. a folded scalar with more-indented lines,
// and writes escapes such as "e\u0301" as the characters themselves, which
// Terraform then normalizes to NFC. An item it cannot cut out is "".
func itemTexts(text string, list, items *yaml.Node) []string {
	out := make([]string, len(items.Content))
	if items.Style&yaml.FlowStyle != 0 {
		return out
	}
	lines := strings.SplitAfter(text, "\n")
	for i, item := range items.Content {
		start, col := item.Line, item.Column-1 // 1-based line; 0-based column of the item's content
		end := len(lines) + 1                  // exclusive, 1-based
		if i+1 < len(items.Content) {
			end = items.Content[i+1].Line
		} else {
			for k := 0; k+1 < len(list.Content); k += 2 {
				if l := list.Content[k].Line; l > start && l < end {
					end = l
				}
			}
		}
		if item.Style&yaml.FlowStyle != 0 || start < 1 || end <= start || start > len(lines) {
			continue
		}
		first := lines[start-1]
		if col > len(first) || strings.TrimSpace(first[:col]) != "-" {
			continue // not "- " followed by the item
		}
		var b strings.Builder
		b.WriteString(first[col:])
		ok := true
		for _, l := range lines[start : end-1] {
			switch {
			case len(l) >= col && strings.TrimSpace(l[:col]) == "":
				b.WriteString(l[col:]) // spaces beyond col on a blank line can be block scalar content
			case strings.TrimSpace(l) == "":
				b.WriteString("\n")
			case strings.HasPrefix(strings.TrimSpace(l), "#"):
				// a comment left of the item: not part of it
			default:
				ok = false
			}
		}
		if ok {
			out[i] = b.String()
			if !strings.HasSuffix(out[i], "\n") {
				out[i] += "\n"
			}
		}
	}
	return out
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.ScalarNode:
		return "scalar (" + strings.TrimPrefix(n.Tag, "!!") + ")"
	case yaml.AliasNode:
		return "alias"
	default:
		return "mapping"
	}
}

var lineRef = regexp.MustCompile(`\bline (\d+)`)

// fileLines rewrites the "line N" of a YAML error, which counts from the start of
// the document, into the line of the source file, so an error in the 300th
// document of a file points where the user can look.
func fileLines(err error, doc Document) string {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return lineRef.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(s[len("line "):])
		return "line " + strconv.Itoa(doc.Line+n-1)
	})
}

// ParseKey reads a key written by Key: its group ("" for the core group),
// kind, namespace ("" for a cluster-scoped kind) and name.
func ParseKey(key string) (group, kind, namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 3:
		group, kind, name = parts[0], parts[1], parts[2]
	case 4:
		group, kind, namespace, name = parts[0], parts[1], parts[2], parts[3]
	default:
		return "", "", "", "", fmt.Errorf("%q is not a key of the form <group>/<Kind>/[<namespace>/]<name>", key)
	}
	if group == "core" {
		group = ""
	}
	return group, kind, namespace, name, nil
}
