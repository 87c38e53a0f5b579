package bundles

import (
	"fmt"
	"strconv"
	"strings"
)

// CRD is a CustomResourceDefinition (apiextensions.k8s.io/v1, Namespaced, one
// version v1, served and stored, with a status subresource) of kind in group,
// named <plural>.<group>, whose YAML is size bytes give or take a few dozen
// (for a group of 32 bytes; a longer one adds twice its excess), or more below
// about 4 KB, where the fixed parts alone are larger than size.
//
// Its openAPIV3Schema is shaped like the ones controller-gen writes for
// prometheus-operator: a spec and a status whose properties are nested
// objects with long descriptions, arrays of objects (some of them list maps),
// string enums, int32 and int64 integers, booleans, patterns, string and
// quantity maps, int-or-string values and objects that preserve unknown
// fields, up to nine levels below spec. Every property is named field<n>,
// numbered in document order, so each name is unique in the document and a
// test can find one field deep inside a large CRD by name. The schema is
// structural, as a kube-apiserver requires.
//
// The same kind and size always give the same bytes; group only names the
// CRD, so two installs of a bundle under different groups have the same
// schemas, and measuring one against the other compares like with like.
func CRD(group, kind string, size int) string { return newCRD(group, kind, size).yaml }

// crd is a generated CRD and what a custom resource of it needs.
type crd struct {
	yaml                string
	group, kind, plural string
	// specLeaves are spec's own scalar properties in document order: a
	// custom resource sets the first few of them.
	specLeaves []leaf
}

type leafKind int

const (
	leafString leafKind = iota
	leafPattern
	leafEnum
	leafInt32
	leafInt64
	leafBool
	leafDuration
	leafStringMap
	leafQuantityMap
	leafIntOrString
	leafStringArray
	leafPreserve
)

// leafWeights is how often each kind of scalar property appears: int32 most,
// as in prometheus-operator's CRDs (ports, replicas, limits, every counter).
var leafWeights = []struct {
	kind   leafKind
	weight int
}{
	{leafString, 18}, {leafPattern, 5}, {leafEnum, 12}, {leafInt32, 22}, {leafInt64, 5}, {leafBool, 12},
	{leafDuration, 6}, {leafStringMap, 5}, {leafQuantityMap, 3}, {leafIntOrString, 3}, {leafStringArray, 6},
	{leafPreserve, 3},
}

// leaf is a scalar property of spec that a custom resource can set.
type leaf struct {
	name string
	kind leafKind
	enum []string
}

// enumValues are the values string enums choose from.
var enumValues = strings.Fields(`Always Never IfNotPresent OnFailure HTTP HTTPS Info Debug Warn Error None All Any
	Strict Lenient Enabled Disabled Auto Manual RoundRobin Random OrderedReady Parallel Delete Retain`)

const (
	namePattern     = `'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`
	durationPattern = `'^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'`
	// quantityPattern is the pattern controller-gen writes for a
	// resource.Quantity.
	quantityPattern = `'^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'`
	// maxDepth is how many levels of objects and arrays of objects may nest
	// below spec: prometheus-operator's reach about nine through the pod
	// template they embed (containers, their probes, their handlers...).
	maxDepth = 9
	// specIndent is the indentation of spec's own properties in the CRD.
	specIndent = 14
)

// schemaGen writes a schema's properties in document order, straight into
// the CRD's text, so that what is left of the size budget is always known
// exactly.
type schemaGen struct {
	b      strings.Builder
	rnd    *source
	fields int
	// record: the properties at specIndent are spec's; their scalars are
	// kept for the custom resource.
	record bool
	leaves []leaf
}

func pad(n int) string { return strings.Repeat(" ", n) }

func (g *schemaGen) nextName() string { return "field" + strconv.Itoa(g.fields+1) }

// shortLeaf is the smallest property: a string with no description. A
// properties list stops once not even this fits.
func shortLeaf(indent int, name string) string {
	return pad(indent) + name + ":\n" + pad(indent+2) + "type: string\n"
}

func (g *schemaGen) minLeaf(indent int) int { return len(shortLeaf(indent, g.nextName())) }

// props writes properties at indent, using at most budget bytes, counting
// the required list that the caller writes after them (two spaces less
// indented). required holds the names the caller already made required and
// paid for. It returns the whole required list and the bytes it used.
func (g *schemaGen) props(indent, depth, budget int, requiredOK bool, required []string) ([]string, int) {
	used := 0
	firstComposite := true
	requiredCost := func(name string) int {
		c := indent + 1 + len(name) + 1 // "- name\n" at indent-2
		if len(required) == 0 {
			c += indent - 2 + len("required:\n")
		}
		return c
	}
	for {
		avail := budget - used
		if avail < g.minLeaf(indent) {
			return required, used
		}
		r := g.rnd.float()
		if depth < maxDepth && r < 0.24 {
			// A nested object (two in three) or array of objects. The first
			// one in an object near the top takes a large share of the
			// budget, so that every CRD has a deep spine as the pod template
			// gives prometheus-operator's; the others take small shares.
			u := g.rnd.float()
			frac := 0.01 + 0.3*u*u*u
			if firstComposite && depth < 6 {
				frac = 0.4 + 0.25*u
			}
			sub := min(avail, int(frac*float64(budget)))
			if sub >= g.minComposite(indent) {
				used += g.composite(r < 0.16, indent, depth, sub)
				firstComposite = false
				continue
			}
		}
		name := g.nextName()
		text, l := g.leaf(indent, name)
		req := requiredOK && l.kind <= leafBool && g.rnd.intn(7) == 0
		cost := len(text)
		if req {
			cost += requiredCost(name)
		}
		if cost > avail {
			req = false
			text, cost = shortLeaf(indent, name), len(shortLeaf(indent, name))
			l = leaf{name: name, kind: leafString}
		}
		g.fields++
		g.b.WriteString(text)
		used += cost
		if req {
			required = append(required, name)
		}
		if g.record && indent == specIndent && l.kind <= leafBool && l.kind != leafPattern {
			g.leaves = append(g.leaves, l)
		}
	}
}

// minComposite is the least budget worth a nested object at indent: its
// header and trailer and room for a few properties.
func (g *schemaGen) minComposite(indent int) int {
	return 2*(indent+20) + 4*g.minLeaf(indent+6) + 200
}

// composite writes a nested object (object) or an array of objects in at
// most budget bytes and returns the bytes written.
func (g *schemaGen) composite(object bool, indent, depth, budget int) int {
	start := g.b.Len()
	g.fields++
	name := "field" + strconv.Itoa(g.fields)
	p := pad(indent)
	desc := description(indent+2, g.rnd.paragraph(g.rnd.between(1, 4)))
	if object {
		trailer := p + "  type: object\n"
		if g.rnd.intn(12) == 0 {
			trailer += p + "  x-kubernetes-map-type: atomic\n"
		}
		header := p + name + ":\n" + desc + p + "  properties:\n"
		if len(header)+len(trailer)+4*g.minLeaf(indent+4) > budget {
			header = p + name + ":\n" + p + "  properties:\n"
		}
		g.b.WriteString(header)
		required, _ := g.props(indent+4, depth+1, budget-len(header)-len(trailer), true, nil)
		g.writeRequired(indent+2, required)
		g.b.WriteString(trailer)
		return g.b.Len() - start
	}
	// An array of objects; one in three is a list map keyed by a required
	// string, as a list of named containers or endpoints is.
	var itemDesc, keyDesc string
	if g.rnd.intn(2) == 0 {
		itemDesc = description(indent+4, g.rnd.paragraph(g.rnd.between(1, 2)))
	}
	listType := g.rnd.intn(9) // 0-2: a list map, 3-4: atomic
	if listType < 3 {
		keyDesc = description(indent+8, g.rnd.paragraph(1))
	}
	var key string
	if listType < 3 {
		g.fields++
		key = "field" + strconv.Itoa(g.fields)
	}
	layout := func(desc, itemDesc, keyDesc string) (header, trailer string, required []string, paid int) {
		header = p + name + ":\n" + desc + p + "  items:\n" + itemDesc + p + "    properties:\n"
		trailer = p + "    type: object\n" + p + "  type: array\n"
		switch {
		case key != "":
			header += pad(indent+6) + key + ":\n" + keyDesc + pad(indent+8) + "type: string\n"
			required = []string{key}
			// The key's part of the required list, which props does not count.
			paid = len(pad(indent+4)+"required:\n") + len(pad(indent+4)+"- "+key+"\n")
			trailer += p + "  x-kubernetes-list-map-keys:\n" + p + "  - " + key + "\n" + p + "  x-kubernetes-list-type: map\n"
		case listType < 5:
			trailer += p + "  x-kubernetes-list-type: atomic\n"
		}
		return header, trailer, required, paid
	}
	header, trailer, required, paid := layout(desc, itemDesc, keyDesc)
	if budget-len(header)-len(trailer)-paid < 4*g.minLeaf(indent+6) {
		header, trailer, required, paid = layout("", "", "")
	}
	g.b.WriteString(header)
	required, _ = g.props(indent+6, depth+1, budget-len(header)-len(trailer)-paid, true, required)
	g.writeRequired(indent+4, required)
	g.b.WriteString(trailer)
	return g.b.Len() - start
}

func (g *schemaGen) writeRequired(indent int, names []string) {
	if len(names) == 0 {
		return
	}
	g.b.WriteString(pad(indent) + "required:\n")
	for _, n := range names {
		g.b.WriteString(pad(indent) + "- " + n + "\n")
	}
}

// leaf renders a scalar property (or a map, a list of strings, an object of
// unknown fields: anything with no properties of its own) at indent.
func (g *schemaGen) leaf(indent int, name string) (string, leaf) {
	total := 0
	for _, w := range leafWeights {
		total += w.weight
	}
	pick := g.rnd.intn(total)
	kind := leafString
	for _, w := range leafWeights {
		if pick < w.weight {
			kind = w.kind
			break
		}
		pick -= w.weight
	}
	p := pad(indent) + "  "
	l := leaf{name: name, kind: kind}
	var b strings.Builder
	b.WriteString(pad(indent) + name + ":\n")
	desc := description(indent+2, g.rnd.paragraph(g.rnd.between(1, 4)))
	switch kind {
	case leafString:
		b.WriteString(desc + p + "type: string\n")
	case leafPattern:
		b.WriteString(desc + p + "pattern: " + namePattern + "\n" + p + "type: string\n")
	case leafEnum:
		b.WriteString(desc + p + "enum:\n")
		n, first := g.rnd.between(2, 5), g.rnd.intn(len(enumValues))
		for i := 0; i < n; i++ {
			v := enumValues[(first+i)%len(enumValues)]
			l.enum = append(l.enum, v)
			b.WriteString(p + "- " + v + "\n")
		}
		b.WriteString(p + "type: string\n")
	case leafInt32:
		b.WriteString(desc + p + "format: int32\n")
		switch g.rnd.intn(4) {
		case 0:
			b.WriteString(p + "maximum: 65535\n" + p + "minimum: 1\n")
		case 1:
			b.WriteString(p + "minimum: 0\n")
		}
		b.WriteString(p + "type: integer\n")
	case leafInt64:
		b.WriteString(desc + p + "format: int64\n" + p + "type: integer\n")
	case leafBool:
		b.WriteString(desc + p + "type: boolean\n")
	case leafDuration:
		b.WriteString(desc + p + "pattern: " + durationPattern + "\n" + p + "type: string\n")
	case leafStringMap:
		b.WriteString(p + "additionalProperties:\n" + p + "  type: string\n" + desc + p + "type: object\n")
	case leafQuantityMap:
		b.WriteString(p + "additionalProperties:\n" + p + "  anyOf:\n" + p + "  - type: integer\n" + p + "  - type: string\n" +
			p + "  pattern: " + quantityPattern + "\n" + p + "  x-kubernetes-int-or-string: true\n" + desc + p + "type: object\n")
	case leafIntOrString:
		b.WriteString(p + "anyOf:\n" + p + "- type: integer\n" + p + "- type: string\n" + desc + p + "x-kubernetes-int-or-string: true\n")
	case leafStringArray:
		b.WriteString(desc + p + "items:\n" + p + "  type: string\n" + p + "type: array\n")
		if g.rnd.intn(2) == 0 {
			b.WriteString(p + "x-kubernetes-list-type: atomic\n")
		}
	case leafPreserve:
		b.WriteString(desc + p + "type: object\n" + p + "x-kubernetes-preserve-unknown-fields: true\n")
	}
	return b.String(), l
}

// plural is the resource name of kind: lower case, with the English plural
// that CRDs use (prometheuses, probes, policies).
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

// Kubernetes' own descriptions of apiVersion and kind, which every CRD that
// controller-gen writes carries.
const typeMetaProperties = `          apiVersion:
            description: |-
              APIVersion defines the versioned schema of this representation of an object.
              Servers should convert recognized schemas to the latest internal value, and
              may reject unrecognized values.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources
            type: string
          kind:
            description: |-
              Kind is a string value representing the REST resource this object represents.
              Servers may infer this from the endpoint the client submits requests to.
              Cannot be updated.
              In CamelCase.
              More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds
            type: string
          metadata:
            type: object
`

func newCRD(group, kind string, size int) crd {
	c := crd{group: group, kind: kind, plural: plural(kind)}
	g := &schemaGen{rnd: newSource("crd", kind, strconv.Itoa(size))}
	head := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    controller-gen.kubebuilder.io/version: v0.18.0
  name: %[1]s.%[2]s
spec:
  group: %[2]s
  names:
    kind: %[3]s
    listKind: %[3]sList
    plural: %[1]s
    singular: %[4]s
  scope: Namespaced
  versions:
  - additionalPrinterColumns:
    - jsonPath: .metadata.creationTimestamp
      name: Age
      type: date
    name: v1
    schema:
      openAPIV3Schema:
`, c.plural, group, kind, strings.ToLower(kind)) +
		description(8, kind+" defines a "+kind+" deployment. "+g.rnd.paragraph(2)) +
		"        properties:\n" + typeMetaProperties
	specHead := "          spec:\n" + description(12, g.rnd.paragraph(3)) + "            properties:\n"
	statusHead := "          status:\n" + description(12, g.rnd.paragraph(3)) + "            properties:\n"
	objectTail := "            type: object\n"
	tail := "        required:\n        - spec\n        type: object\n    served: true\n    storage: true\n    subresources:\n      status: {}\n"
	// The budget counts the group as 32 bytes, whatever its length, so that
	// the schema does not depend on it.
	rest := size - (len(head) - 2*len(group) + 2*32) - len(specHead) - len(statusHead) - 2*len(objectTail) - len(tail)

	g.b.WriteString(head + specHead)
	// Spec takes most of the schema, as in the CRDs this imitates; status
	// takes what spec leaves. An empty properties map is not a schema, so
	// each gets at least one property however small size is.
	g.record = true
	_, used := g.props(specIndent, 1, max(rest*92/100, g.minLeaf(specIndent)), false, nil)
	g.record = false
	g.b.WriteString(objectTail + statusHead)
	_, _ = g.props(specIndent, 1, max(rest-used, g.minLeaf(specIndent)), false, nil)
	g.b.WriteString(objectTail + tail)
	c.yaml = g.b.String()
	c.specLeaves = g.leaves
	return c
}

// customResource is an object of the CRD named name in namespace, setting the
// first few of spec's scalar properties to values the schema accepts.
func (c crd) customResource(name, namespace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s/v1\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n", c.group, c.kind, name, namespace)
	n := 0
	for _, l := range c.specLeaves {
		if n == 6 {
			break
		}
		var v string
		switch l.kind {
		case leafString:
			v = name
		case leafEnum:
			v = l.enum[0]
		case leafInt32:
			v = "30"
		case leafInt64:
			v = "86400"
		case leafBool:
			v = "true"
		default:
			continue
		}
		fmt.Fprintf(&b, "  %s: %s\n", l.name, v)
		n++
	}
	if n == 0 {
		b.WriteString("  {}\n")
	}
	return b.String()
}

// WidenDeepestInt32 changes crd's most deeply nested int32 property (the first
// in document order at that depth) to int64, as an upgrade that lifts a limit
// does: one field deep inside the CRD. It returns the changed CRD and the
// property's name, or crd unchanged and "" if it has no int32 property.
func WidenDeepestInt32(crd string) (widened, field string) {
	lines := strings.Split(crd, "\n")
	best, depth := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "format: int32" {
			if d := len(l) - len(strings.TrimLeft(l, " ")); d > depth {
				best, depth = i, d
			}
		}
	}
	if best < 0 {
		return crd, ""
	}
	// The property is the nearest line above, two spaces less indented.
	for i := best - 1; i >= 0; i-- {
		l := lines[i]
		if len(l)-len(strings.TrimLeft(l, " ")) == depth-2 {
			field = strings.TrimSuffix(strings.TrimSpace(l), ":")
			break
		}
	}
	lines[best] = strings.Replace(lines[best], "int32", "int64", 1)
	return strings.Join(lines, "\n"), field
}
