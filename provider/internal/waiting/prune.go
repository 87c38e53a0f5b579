package waiting

import (
	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// StatusValue is what a field wait exposes (ADR 0005: you get only what you wait
// for): the object pruned to the waited path, rooted at status when the path
// starts there, so `status.loadBalancer.ingress[0].hostname` reads back as
// status.loadBalancer.ingress[0].hostname in configuration. A path outside
// status keeps its root: `spec.clusterIP` gives {spec = {clusterIP = ...}}.
//
// found is false when the path is absent or its value empty.
func StatusValue(obj map[string]any, p objectpath.Path) (v any, found bool) {
	if leaf, ok := p.Get(obj); !ok || IsEmpty(leaf) {
		return nil, false
	}
	pruned, ok := p.Prune(obj)
	if !ok {
		return nil, false
	}
	if p[0].Field != nil && *p[0].Field == "status" {
		m, _ := pruned.(map[string]any) // pruned from an object: a map
		return m["status"], true
	}
	return pruned, true
}
