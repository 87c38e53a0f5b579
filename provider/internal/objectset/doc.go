// Package objectset holds what the resources that keep a set of objects as
// one (k8sconnect_helm_release, k8sconnect_manifest_set) do alike: objects
// keyed as objects shows them and their projections as its elements,
// ignore_fields keyed by those keys, requests in parallel within a bound,
// and kinds applied and deleted one after the other in Helm's order
// (docs/adr/0013 and 0016). What differs, Helm's records and hooks or the
// ApplySet's parent, stays in each resource.
package objectset
