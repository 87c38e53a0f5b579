package helmrelease

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

var _ resource.ResourceWithImportState = (*Resource)(nil)

// ImportState takes `[<context>#]<namespace>/<name>` of a release made by
// helm (3 or 4, client- or server-side apply) or by an earlier configuration.
// It is read through the provider's connection when it has one and no
// context is named, else through the kubeconfig of $KUBECONFIG or
// ~/.kube/config, as k8sconnect_object imports. The first apply adopts its
// objects.
func (r *Resource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	imp, ok := r.clients.ImportNamespaced(ctx, req.ID, "the release", "monitoring/prometheus", &resp.Diagnostics)
	if !ok {
		return
	}
	c, ns, name := imp.Client, imp.Namespace, imp.Name
	history, err := newRecords(c, ns, 0).history(name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the release to import", connection.Explain(err))
		return
	}
	if len(history) == 0 {
		resp.Diagnostics.AddError("Release not found",
			fmt.Sprintf("No release %s has records in namespace %s (helm list -n %s shows what there is), so there "+
				"is nothing to import.", name, ns, ns))
		return
	}
	for attr, v := range map[string]any{"id": types.StringValue(releaseID(ns, name)), "name": types.StringValue(name),
		"namespace": types.StringValue(ns), "objects": types.MapValueMust(objectset.ProjectionType, nil), "cluster_connection": imp.Connection} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attr), v)...)
	}
	resp.Diagnostics.Append(privatestate.Save(ctx, resp.Private, privateAdopting, true)...)
}
