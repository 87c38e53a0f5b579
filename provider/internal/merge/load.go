package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/spec3"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Source serves the cluster's per-group-version OpenAPI v3 documents. The
// Discovery client of a *connection.Client is one; tests use
// k8s.io/client-go/openapi/openapitest. It must be comparable (a pointer), as
// Load keeps one cache per source.
type Source interface {
	OpenAPIV3() openapi.Client
}

// errNotPublished says the cluster's documents do not (yet) describe a kind.
var errNotPublished = errors.New("not published")

// Load returns the type of gvk as the cluster describes it in the OpenAPI v3
// document of its group-version (/openapi/v3/apis/<group>/<version>, or
// /openapi/v3/api/v1). Documents are cached per source and group-version, and
// fetched again when the server's hash of the document changes. A kind the
// cached documents do not know (a CRD created moments ago) invalidates src once,
// when it can be invalidated (a cached discovery client can), and is looked up
// again.
func Load(src Source, gvk schema.GroupVersionKind) (*Type, error) {
	l := loaderFor(src)
	t, err := l.load(gvk)
	if errors.Is(err, errNotPublished) {
		if inv, ok := src.(interface{ Invalidate() }); ok {
			inv.Invalidate()
			t, err = l.load(gvk)
		}
	}
	return t, err
}

var loaders = struct {
	sync.Mutex
	m map[Source]*loader
}{m: map[Source]*loader{}}

func loaderFor(src Source) *loader {
	loaders.Lock()
	defer loaders.Unlock()
	l, ok := loaders.m[src]
	if !ok {
		l = &loader{src: src, docs: map[schema.GroupVersion]*document{}}
		loaders.m[src] = l
	}
	return l
}

type loader struct {
	src  Source
	mu   sync.Mutex
	docs map[schema.GroupVersion]*document
}

// document is one group-version's types, converted once.
type document struct {
	url    string // the server's URL for it, which carries a hash of its content
	schema *smdschema.Schema
	kinds  map[schema.GroupVersionKind]string // definition name by x-kubernetes-group-version-kind
	// patch holds x-kubernetes-patch-strategy and -merge-key, by definition
	// name then property: the structured-merge-diff schema does not keep them.
	patch map[string]map[string]patchMeta
}

func (l *loader) load(gvk schema.GroupVersionKind) (*Type, error) {
	gv := gvk.GroupVersion()
	key := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		key = "api/" + gv.Version
	}
	paths, err := l.src.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's OpenAPI v3 documents: %w", err)
	}
	published, ok := paths[key]
	if !ok {
		return nil, fmt.Errorf("the cluster publishes no OpenAPI v3 document for %s (/openapi/v3/%s): %w", gv, key, errNotPublished)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.docs[gv]
	if d == nil || d.url != published.ServerRelativeURL() {
		raw, err := published.Schema("application/json")
		if err != nil {
			return nil, fmt.Errorf("reading the OpenAPI v3 document for %s: %w", gv, err)
		}
		if d, err = newDocument(raw); err != nil {
			return nil, fmt.Errorf("the OpenAPI v3 document for %s: %w", gv, err)
		}
		d.url = published.ServerRelativeURL()
		l.docs[gv] = d
	}
	name, ok := d.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("the OpenAPI v3 document for %s has no schema for kind %s: %w", gv, gvk.Kind, errNotPublished)
	}
	root := smdschema.TypeRef{NamedType: &name}
	return &Type{gvk: gvk, doc: d, root: root, parser: typed.ParseableType{Schema: d.schema, TypeRef: root}}, nil
}

// newDocument converts a group-version document with kube-openapi's schemaconv,
// the converter the API server itself uses for Server-Side Apply, so list
// types, list-map keys and their defaults, map types, $ref and allOf are read
// exactly as the server reads them.
func newDocument(raw []byte) (*document, error) {
	var doc spec3.OpenAPI
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	if doc.Components == nil || len(doc.Components.Schemas) == 0 {
		return nil, fmt.Errorf("it has no components.schemas")
	}
	s, err := schemaconv.ToSchemaFromOpenAPI(doc.Components.Schemas, false)
	if err != nil {
		return nil, fmt.Errorf("converting its schemas: %w", err)
	}
	d := &document{schema: s, kinds: map[schema.GroupVersionKind]string{}, patch: map[string]map[string]patchMeta{}}
	for name, def := range doc.Components.Schemas {
		for _, gvk := range groupVersionKinds(def.Extensions) {
			d.kinds[gvk] = name
		}
		for prop, ps := range def.Properties {
			pm := patchMeta{strategy: stringExt(ps.Extensions, "x-kubernetes-patch-strategy"),
				mergeKey: stringExt(ps.Extensions, "x-kubernetes-patch-merge-key")}
			if pm != (patchMeta{}) {
				if d.patch[name] == nil {
					d.patch[name] = map[string]patchMeta{}
				}
				d.patch[name][prop] = pm
			}
		}
	}
	return d, nil
}

func groupVersionKinds(ext map[string]any) []schema.GroupVersionKind {
	list, _ := ext["x-kubernetes-group-version-kind"].([]any)
	var out []schema.GroupVersionKind
	for _, e := range list {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}

func stringExt(ext map[string]any, key string) string {
	s, _ := ext[key].(string)
	return s
}
