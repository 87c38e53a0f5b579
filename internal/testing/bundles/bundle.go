package bundles

import (
	"strings"
)

// Step is one of the three applies a user makes of a bundle, in order: each
// needs what the one before made (a custom resource its CRD; a namespaced
// object its Namespace).
type Step int

const (
	// CRDs are the CustomResourceDefinitions: first, and Established before
	// anything of their kinds is applied.
	CRDs Step = iota
	// ClusterScoped are the other cluster-scoped objects: the Namespace,
	// ClusterRoles and their bindings, an IngressClass, a PriorityClass.
	ClusterScoped
	// Namespaced are the objects in the bundle's namespace, custom resources
	// among them.
	Namespaced
)

// Steps are the steps in the order a user applies them; a destroy goes the
// other way.
var Steps = []Step{CRDs, ClusterScoped, Namespaced}

func (s Step) String() string {
	switch s {
	case CRDs:
		return "crds"
	case ClusterScoped:
		return "cluster-scoped"
	case Namespaced:
		return "namespaced"
	}
	return "unknown"
}

// document is one object of a bundle.
type document struct {
	step Step
	kind string
	yaml string
}

// Bundle is a vendor's install bundle shaped like prometheus-operator's with
// its usual companions (Grafana, kube-state-metrics, node-exporter, a
// blackbox exporter): ten CRDs of 50 to 830 KB, 4.15 MB in all, as
// prometheus-operator's are, and 63 other objects of 27 kinds, a custom
// resource of each CRD among them: 73 objects, 4.2 MB of YAML. Nothing in it reaches outside the bundle:
// no admission webhooks, no aggregated ClusterRoles, no API services, so
// installing it on a shared cluster changes nothing for anyone else.
// Pods of its Deployments, StatefulSets and DaemonSet are created as on any
// cluster; their images are never pulled on the embedded one.
//
// A Bundle is immutable: the With methods return a changed copy.
type Bundle struct {
	name     string
	logLevel string
	widened  bool
	crds     []crd
	docs     []document
}

// crdSpecs are the bundle's CRDs: prometheus-operator's kinds, each about the
// size of its CRD in prometheus-operator v0.8x's bundle.yaml.
var crdSpecs = []struct {
	kind string
	size int
}{
	{"Alertmanager", 600_000},
	{"AlertmanagerConfig", 480_000},
	{"PodMonitor", 60_000},
	{"Probe", 70_000},
	{"Prometheus", 830_000},
	{"PrometheusAgent", 760_000},
	{"PrometheusRule", 50_000},
	{"ScrapeConfig", 620_000},
	{"ServiceMonitor", 60_000},
	{"ThanosRuler", 620_000},
}

// New is the bundle installed as name: name is its namespace, the prefix of
// its cluster-scoped objects' names and the first label of its CRDs' API
// group (<name>.monitoring.k8sconnect.test), so that several installs live
// side by side on one cluster without sharing an object. name must be a DNS
// label. Its operator's log level is "info".
func New(name string) *Bundle {
	b := &Bundle{name: name, logLevel: "info"}
	group := Group(name)
	for _, s := range crdSpecs {
		b.crds = append(b.crds, newCRD(group, s.kind, s.size))
	}
	b.build()
	return b
}

// Group is the API group of the CRDs of the bundle installed as name.
func Group(name string) string { return name + ".monitoring.k8sconnect.test" }

// Name is the name the bundle is installed as.
func (b *Bundle) Name() string { return b.name }

// WithLogLevel is the bundle with one data value changed: the log level in
// the operator's ConfigMap. It is the update the bench measures first, since
// it is the change users make most often: their own settings (a log level, a
// retention, a replica count) change far more often than a vendor's CRDs,
// which change only with an upgrade of the whole bundle, and then in many
// fields of many objects at once rather than in one.
func (b *Bundle) WithLogLevel(level string) *Bundle {
	c := *b
	c.logLevel = level
	c.build()
	return &c
}

// WithWidenedCRD is the bundle with one field changed deep inside its
// largest CRD (Prometheus, 830 KB): its most deeply nested int32 property
// becomes an int64 (WidenDeepestInt32). It is the update whose cost is all in
// the size of the object: a plan must still read, send and compare the whole
// CRD to find one changed line.
func (b *Bundle) WithWidenedCRD() *Bundle {
	c := *b
	c.widened = true
	c.build()
	return &c
}

// LargestCRD is the name of the bundle's largest CRD, the one WithWidenedCRD
// changes, and the property it changes there.
func (b *Bundle) LargestCRD() (name, field string) {
	l := b.largest()
	_, field = WidenDeepestInt32(l.yaml)
	return l.plural + "." + l.group, field
}

func (b *Bundle) largest() crd {
	l := b.crds[0]
	for _, c := range b.crds {
		if len(c.yaml) > len(l.yaml) {
			l = c
		}
	}
	return l
}

// build lays the documents out in the order a vendor's single file has them,
// which is not the order they are applied in: the CRDs, then the rest by kind
// as Helm's install order sorts it, so that cluster-scoped and namespaced
// objects alternate and only a tool that sorts them by scope can apply the
// file in one go.
func (b *Bundle) build() {
	b.docs = nil
	largest := b.largest()
	for _, c := range b.crds {
		y := c.yaml
		if b.widened && c.kind == largest.kind {
			y, _ = WidenDeepestInt32(y)
		}
		b.docs = append(b.docs, document{step: CRDs, kind: "CustomResourceDefinition", yaml: y})
	}
	b.docs = append(b.docs, objects(b.name, b.logLevel)...)
	for _, c := range b.crds {
		b.docs = append(b.docs, document{step: Namespaced, kind: c.kind, yaml: c.customResource("main", b.name)})
	}
}

// YAML is the bundle as the one multi-document file a vendor ships.
func (b *Bundle) YAML() string { return join(b.docs...) }

// Step is the documents of one step, as a multi-document file.
func (b *Bundle) Step(s Step) string { return join(b.of(s)...) }

// Documents are the documents of one step, one object each, in the order
// the bundle's file has them.
func (b *Bundle) Documents(s Step) []string {
	var out []string
	for _, d := range b.of(s) {
		out = append(out, d.yaml)
	}
	return out
}

func (b *Bundle) of(s Step) []document {
	var out []document
	for _, d := range b.docs {
		if d.step == s {
			out = append(out, d)
		}
	}
	return out
}

// Len is how many objects the bundle holds.
func (b *Bundle) Len() int { return len(b.docs) }

// Kinds are the distinct kinds in the bundle, in the file's order.
func (b *Bundle) Kinds() []string {
	var kinds []string
	seen := map[string]bool{}
	for _, d := range b.docs {
		if !seen[d.kind] {
			seen[d.kind] = true
			kinds = append(kinds, d.kind)
		}
	}
	return kinds
}

func join(docs ...document) string {
	parts := make([]string, len(docs))
	for i, d := range docs {
		parts[i] = d.yaml
	}
	return strings.Join(parts, "---\n")
}
