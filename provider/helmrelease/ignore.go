package helmrelease

import "github.com/k8sconnect/k8sconnect/provider/internal/objectset"

// ignore leaves the fields the rules name out of every object of the
// release (not its hooks, which run and go), and reports the patterns that
// matched no object.
func (rd *rendered) ignore(rules objectset.IgnoreRules) {
	var keys []string
	for _, list := range [][]piece{rd.crds, rd.objects} {
		for i := range list {
			p := &list[i]
			keys = append(keys, p.key)
			p.ignored = rules.FieldsOf(p.key)
			for _, f := range p.ignored {
				f.RemoveEvery(p.obj.Object)
			}
		}
	}
	rd.unmatchedIgnores = rules.Unmatched(keys)
}
