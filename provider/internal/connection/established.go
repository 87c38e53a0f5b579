package connection

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// establishedKinds are the kinds of CRDs this process saw Established,
// mapped from the CRD itself. The API server routes a CRD's resource once
// the CRD is Established, and its discovery document lists the kind later:
// 1.5 s after ten CRDs on the 2-core machine, where a set that waited for
// discovery spent a quarter of its create. Mapping answers from here while
// discovery does not list the kind yet, as kubectl users do with `kubectl
// wait --for condition=established` before they apply custom resources.
// A kind whose CRD is later deleted is forgotten when KindGone confirms it,
// as a kind cached from discovery is.
type establishedKinds struct {
	mu    sync.Mutex
	kinds map[schema.GroupKind]map[string]*meta.RESTMapping // by version
}

// LearnEstablished records the mapping of the kind crd serves in each of
// its served versions, from its accepted names and scope. crd must be
// Established; one without accepted names teaches nothing.
func (c *Client) LearnEstablished(crd *unstructured.Unstructured) {
	plural, _, _ := unstructured.NestedString(crd.Object, "status", "acceptedNames", "plural")
	scopeName, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	kinds := ServedKinds(crd)
	if plural == "" || len(kinds) == 0 {
		return
	}
	sc := meta.RESTScopeNamespace
	if scopeName == "Cluster" {
		sc = meta.RESTScopeRoot
	}
	byVersion := map[string]*meta.RESTMapping{}
	for _, gvk := range kinds {
		byVersion[gvk.Version] = &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(plural), GroupVersionKind: gvk, Scope: sc}
	}
	c.established.mu.Lock()
	defer c.established.mu.Unlock()
	if c.established.kinds == nil {
		c.established.kinds = map[schema.GroupKind]map[string]*meta.RESTMapping{}
	}
	c.established.kinds[kinds[0].GroupKind()] = byVersion
}

// ServedKinds lists the kind a CRD defines in each version it serves.
func ServedKinds(crd *unstructured.Unstructured) []schema.GroupVersionKind {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []schema.GroupVersionKind
	for _, v := range versions {
		version, _ := v.(map[string]any)
		name, _ := version["name"].(string)
		if served, _ := version["served"].(bool); served && name != "" && kind != "" {
			out = append(out, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
		}
	}
	return out
}

// establishedMapping is the learned mapping of gvk (any served version when
// gvk has none), nil when none was learned.
func (c *Client) establishedMapping(gvk schema.GroupVersionKind) *meta.RESTMapping {
	c.established.mu.Lock()
	defer c.established.mu.Unlock()
	byVersion := c.established.kinds[gvk.GroupKind()]
	if gvk.Version != "" {
		return byVersion[gvk.Version]
	}
	for _, m := range byVersion {
		return m
	}
	return nil
}

// forgetEstablished drops what was learned of gk: discovery says it is gone.
func (c *Client) forgetEstablished(gk schema.GroupKind) {
	c.established.mu.Lock()
	defer c.established.mu.Unlock()
	delete(c.established.kinds, gk)
}
