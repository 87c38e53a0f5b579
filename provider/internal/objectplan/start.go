package objectplan

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/privatestate"
)

// Client is the client a plan asks. It is nil, with ok true, when the plan
// cannot ask the cluster yet: the connection is unknown, or it is the
// provider's and that is known only at apply; then everything the cluster
// would answer is known after apply too. ok is false when the connection
// cannot be built, which is reported in diags.
func Client(ctx context.Context, clients *connection.Cache, conn types.Object, diags *diag.Diagnostics) (c *connection.Client, ok bool) {
	m, known, d := connection.FromObject(ctx, conn)
	diags.Append(d...)
	if !known || clients == nil || diags.HasError() {
		return nil, !diags.HasError()
	}
	c, err := clients.Client(ctx, m)
	switch {
	case errors.Is(err, connection.ErrDefaultUnknown):
		return nil, true
	case err != nil:
		connection.ReportClientError(diags, err)
		return nil, false
	}
	return c, true
}

// Cluster confirms which cluster c is against the identity state recorded
// (clusterUID, and the other identities the resource's private state keeps)
// and returns the cluster's identity. what names the object or release
// planned, namespace the namespace it is in (its kube-root-ca.crt is one
// identity). ok is false, reported in diags, when the cluster is not the
// recorded one, cannot be asked, or cannot be confirmed: a plan read there
// would take an object missing in another cluster for one deleted, and plan
// to make it again there (connection.ConfirmCluster). A new resource, or one
// that recorded no identity, is only warned about.
func Cluster(ctx context.Context, c *connection.Client, clusterUID string, private privatestate.Reader, what, namespace string,
	diags *diag.Diagnostics) (identity string, ok bool) {
	cluster, err := c.ConfirmCluster(ctx, connection.RecordedIn(ctx, clusterUID, private), what, namespace)
	if err != nil {
		diags.AddError("Cannot confirm which cluster this is", connection.Explain(err))
		return "", false
	}
	cluster.Warn(diags)
	return cluster.Identity, true
}

// ClusterUID is cluster_uid as planned: the value the plan already holds
// (state's, kept for unknown), else the identity Cluster confirmed.
func ClusterUID(planned types.String, identity string) types.String {
	if planned.IsUnknown() || planned.IsNull() {
		return types.StringValue(identity)
	}
	return planned
}
