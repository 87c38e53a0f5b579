// Package connectiontest connects package tests inside provider/ to the
// project's local cluster, the way a provider block would. It lives under
// provider/internal because the connection package does, and apart from it
// because only tests use it.
package connectiontest

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// Local is a client of the shared local cluster, with a cache of its own.
func Local(t testing.TB) *connection.Client {
	t.Helper()
	cl := localcluster.Shared(t)
	// The attributes not set here are null, as the zero value of each.
	m := connection.Model{Host: types.StringValue(cl.Host), ClusterCACertificate: types.StringValue(string(cl.CAPEM))}
	if cl.Token != "" {
		m.Token = types.StringValue(cl.Token)
	} else {
		m.ClientCertificate, m.ClientKey = types.StringValue(string(cl.ClientCertPEM)), types.StringValue(string(cl.ClientKeyPEM))
	}
	c, err := connection.NewCache().Client(context.Background(), m)
	if err != nil {
		t.Fatal(fmt.Errorf("connecting to the local cluster: %w", err))
	}
	return c
}
