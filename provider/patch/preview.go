package patch

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/merge"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
	"github.com/k8sconnect/k8sconnect/provider/internal/sensitive"
)

// dryRunUnsupported: an admission webhook declared side effects, so the server
// refuses every dry-run request that reaches it.
func dryRunUnsupported(err error) bool {
	return strings.Contains(err.Error(), "does not support dry run")
}

// previewLocally predicts the patched fields' values as the server's own
// Server-Side Apply engine computes them from the cluster's OpenAPI v3 schema
// for the target's kind (list-maps by key, sets, atomic lists and maps), never
// a plain JSON merge. manager is the patch's field manager: what it applied
// before and leaves out now is pruned as the server prunes it.
func previewLocally(c *connection.Client, target manifest.Identity, live *unstructured.Unstructured, ct *content,
	manager string, red sensitive.Redactor) (projection.Projection, error) {
	typ, err := merge.Load(c.Discovery, target.GVK())
	if err != nil {
		return nil, err
	}
	merged, err := merge.Merge(live.Object, ct.object, typ, manager)
	if err != nil {
		return nil, err
	}
	paths, err := merge.Paths(ct.object, typ)
	if err != nil {
		return nil, err
	}
	out := projection.Projection{}
	for _, p := range paths {
		if v, ok := p.Get(merged); ok {
			out[p.String()] = red.Render(merged, p, v)
		}
	}
	return out, nil
}
