package patch

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/types"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

// PreviewBoth returns, for an apply patch, the local preview and the server's
// dry-run prediction, so a test can hold one against the other.
func PreviewBoth(ctx context.Context, c *connection.Client, target manifest.Identity, patch map[string]any) (local, server projection.Projection, err error) {
	live, err := c.Get(ctx, target.GVK(), target.Namespace, target.Name)
	if err != nil {
		return nil, nil, err
	}
	ct := &content{patchType: ktypes.ApplyPatchType, object: patch}
	manager := FieldManager("preview-test")
	if local, err = previewLocally(c, target, live, ct, manager, redactor(types.StringValue("preview-test"))); err != nil {
		return nil, nil, err
	}
	dry, err := send(ctx, c, target, ct, manager, true, "")
	if err != nil {
		return nil, nil, err
	}
	obs, err := projection.ObserveRedacted(dry, manager, nil, nil, nil, redactor(types.StringValue("preview-test")))
	return local, obs.Projection, err
}
