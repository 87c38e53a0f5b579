// Package scope is the one place for the rules of namespace scope: which kinds
// live in namespaces, and which namespace an object given none lands in. Every
// resource and data source asks here, so a namespaced object without a
// namespace is defaulted the same way everywhere (yamldocs keeps the table of
// built-in kinds' scopes for when no cluster can be asked).
package scope

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespaced reports whether objects of a mapped kind live in namespaces.
func Namespaced(m *meta.RESTMapping) bool {
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}

// Namespace is where an object of a mapped kind, given namespace ns, lives: ns,
// "default" for a namespaced kind given none (as the API server and kubectl
// do), and "" for a cluster-scoped kind.
func Namespace(m *meta.RESTMapping, ns string) string {
	switch {
	case !Namespaced(m):
		return ""
	case ns == "":
		return metav1.NamespaceDefault
	default:
		return ns
	}
}
