// Package bundles generates the install bundles that vendors ship, to measure
// and test k8sconnect on what users really apply rather than on ConfigMaps:
// prometheus-operator's ten CRDs of up to 830 KB each, with a full install of
// some sixty objects beside them.
//
// Everything is deterministic: the same arguments give the same bytes, on
// every machine and Go release (the randomness is a seeded splitmix64, the
// text made of a fixed vocabulary), so a measurement or a test failure can be
// reproduced.
//
//   - CRD makes one CustomResourceDefinition of a given size whose schema is
//     shaped like controller-gen's for prometheus-operator, with every
//     property named uniquely (field1, field2, ...) so that a test can change
//     one field deep inside it.
//   - New makes a Bundle: YAML is the one multi-document file a vendor ships;
//     Step and Documents give the three steps a user applies in order (CRDs,
//     the other cluster-scoped objects, the namespaced ones).
//   - WithLogLevel and WithWidenedCRD are the bundle with one field of one
//     object changed: a data value in a ConfigMap, or one property deep in the
//     largest CRD (WidenDeepestInt32).
//
// The bench (`make bench WORKLOAD=bundle`, internal/cmd/k8sconnect-bench)
// applies a bundle with kubectl and with each engine; the test in this
// package applies one to the embedded cluster, which must accept it.
package bundles
