package object

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/resourceref"
)

var pathConnection = path.Root("cluster_connection")

// client returns the cached client for a cluster_connection value.
func (r *Resource) client(ctx context.Context, conn types.Object, diags *diag.Diagnostics) (*connection.Client, bool) {
	m, known, d := connection.FromObject(ctx, conn)
	diags.Append(d...)
	if diags.HasError() {
		return nil, false
	}
	if !known {
		diags.AddAttributeError(pathConnection, "Unknown cluster_connection", "cluster_connection is not known yet at apply time.")
		return nil, false
	}
	c, err := r.clients.Client(ctx, m)
	if err != nil {
		diags.AddAttributeError(pathConnection, "Invalid cluster_connection", err.Error())
		return nil, false
	}
	return c, true
}

func resourceClient(c *connection.Client, ref resourceref.Model) (dynamic.ResourceInterface, error) {
	mapping, err := c.Mapping(ref.Identity().GVK())
	if err != nil {
		return nil, err
	}
	return c.Resource(mapping, ref.Namespace.ValueString()), nil
}

func get(ctx context.Context, c *connection.Client, ref resourceref.Model) (*unstructured.Unstructured, error) {
	ri, err := resourceClient(c, ref)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, ref.Name.ValueString(), metav1.GetOptions{})
}
