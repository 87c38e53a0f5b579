package yamldocs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scoped is a set of manifests sorted into the order they can be applied in:
// CRDs before the custom resources they define, cluster-scoped objects (such as
// Namespaces) before the namespaced objects inside them. Maps hold the manifests'
// bodies (Manifest.Body), keyed by Manifest.Key.
type Scoped struct {
	CRDs          map[string]string
	ClusterScoped map[string]string
	Namespaced    map[string]string
}

// ScopeFinder asks a cluster whether a kind is namespaced. known is false when the
// cluster does not serve the kind.
type ScopeFinder interface {
	Namespaced(gk schema.GroupKind) (namespaced, known bool, err error)
}

// Classify sorts manifests by scope. The scope of a kind comes from, in order:
//
//  1. a CustomResourceDefinition for it among the manifests (its spec.scope is
//     authoritative and immutable, and the cluster may not have it yet);
//  2. the cluster, when finder is not nil, so custom kinds installed earlier are
//     placed right;
//  3. the built-in table of Kubernetes kinds.
//
// A kind none of them knows is an error naming every document of that kind and
// the two ways to fix it.
func Classify(manifests map[string]Manifest, finder ScopeFinder) (Scoped, error) {
	return ClassifyInNamespace(manifests, finder, "")
}

// ClassifyInNamespace is Classify for manifests bound for one namespace, as
// a Helm release's are: a namespaced manifest that sets no namespace gets
// namespace in its body and its key, as Helm and kubectl -n put it there, so
// the object's key names where it lands. Two manifests that then name the
// same object are an error, as in Split. An empty namespace leaves every
// manifest as written.
func ClassifyInNamespace(manifests map[string]Manifest, finder ScopeFinder, namespace string) (Scoped, error) {
	out := Scoped{CRDs: map[string]string{}, ClusterScoped: map[string]string{}, Namespaced: map[string]string{}}
	defined := map[schema.GroupKind]bool{}
	for _, m := range manifests {
		if m.CRD != nil {
			defined[schema.GroupKind{Group: m.CRD.Group, Kind: m.CRD.Kind}] = m.CRD.Namespaced
		}
	}

	// One lookup per kind, not per manifest: a cluster miss resets its discovery
	// cache, which must not happen once for each of 500 objects.
	scopes := map[schema.GroupKind]bool{}
	placed := map[string]Manifest{} // namespaced keys so far, to report a clash with both documents
	unknown := map[schema.GroupKind][]Manifest{}
	var errs []error
	for _, key := range sortedKeys(manifests) {
		m := manifests[key]
		if m.CRD != nil {
			out.CRDs[key] = m.Body
			continue
		}
		gk := m.GroupKind()
		namespaced, seen := scopes[gk]
		if !seen {
			if _, miss := unknown[gk]; miss {
				unknown[gk] = append(unknown[gk], m)
				continue
			}
			var known bool
			var err error
			namespaced, known, err = lookup(gk, defined, finder)
			if err != nil {
				errs = append(errs, fmt.Errorf("finding the scope of %s for %s: %w", gk, m.Where(), err))
				if len(errs) >= maxErrors {
					break
				}
				scopes[gk] = true // report each kind once
				continue
			}
			if !known {
				unknown[gk] = append(unknown[gk], m)
				continue
			}
			scopes[gk] = namespaced
		}
		if namespaced {
			if m.Namespace == "" && namespace != "" {
				if err := placeInNamespace(out.Namespaced, placed, m, namespace); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if first, dup := placed[key]; dup {
				errs = append(errs, definedTwice(key, first, m))
				continue
			}
			out.Namespaced[key], placed[key] = m.Body, m
		} else {
			out.ClusterScoped[key] = m.Body
		}
	}

	gks := make([]schema.GroupKind, 0, len(unknown))
	for gk := range unknown {
		gks = append(gks, gk)
	}
	slices.SortFunc(gks, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	for _, gk := range gks {
		errs = append(errs, unknownKindError(gk, unknown[gk], finder != nil))
	}
	if len(errs) > 0 {
		return Scoped{}, errors.Join(errs...)
	}
	return out, nil
}

func lookup(gk schema.GroupKind, defined map[schema.GroupKind]bool, finder ScopeFinder) (namespaced, known bool, err error) {
	if namespaced, ok := defined[gk]; ok {
		return namespaced, true, nil
	}
	if finder != nil {
		namespaced, known, err := finder.Namespaced(gk)
		if err != nil || known {
			return namespaced, known, err
		}
	}
	namespaced, known = BuiltinNamespaced(gk)
	return namespaced, known, nil
}

func unknownKindError(gk schema.GroupKind, docs []Manifest, haveCluster bool) error {
	where := make([]string, 0, len(docs))
	for i, m := range docs {
		if i == 3 {
			where = append(where, fmt.Sprintf("and %d more", len(docs)-3))
			break
		}
		where = append(where, m.Where())
	}
	name := gk.Kind
	if gk.Group != "" {
		name += "." + gk.Group
	}
	if haveCluster {
		return fmt.Errorf("the scope of kind %s (%s) is unknown: the cluster does not serve it and no CustomResourceDefinition for it is in the input. "+
			"Include its CustomResourceDefinition in the same input, or install it before reading this data source", name, strings.Join(where, ", "))
	}
	return fmt.Errorf("the scope of kind %s (%s) is unknown: it is not a built-in Kubernetes kind and no CustomResourceDefinition for it is in the input. "+
		"Set cluster_connection so the cluster's discovery tells the scope, or include the kind's CustomResourceDefinition in the same input", name, strings.Join(where, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// placeInNamespace adds m, a namespaced manifest that sets no namespace, to
// out under namespace.
func placeInNamespace(out map[string]string, placed map[string]Manifest, m Manifest, namespace string) error {
	key := Key(m.GroupKind(), namespace, m.Name)
	if first, dup := placed[key]; dup {
		return definedTwice(key, first, m)
	}
	body, err := withNamespace(m.Body, namespace)
	if err != nil {
		return fmt.Errorf("%s: setting its namespace: %w", m.Where(), err)
	}
	out[key], placed[key] = body, m
	return nil
}

func definedTwice(key string, first, second Manifest) error {
	return fmt.Errorf("%s is defined twice: in %s and in %s; "+
		"each object must appear once, or the two would fight over it", key, first.Where(), second.Where())
}
