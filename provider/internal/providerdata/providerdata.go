// Package providerdata is what the provider hands every resource in Configure:
// the shared client cache and the provider-level settings.
package providerdata

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/dynamicvalue"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
)

// Data is passed as ResourceData and DataSourceData.
type Data struct {
	Clients           *connection.Cache
	OwnershipMessages ownership.Verbosity
	// Numbers says how dynamic outputs carry numbers (exact integers as
	// strings under Pulumi).
	Numbers dynamicvalue.Options
	// Status shows a progress line where the engine shows progress: Pulumi's
	// status display. A no-op under Terraform, whose users read the log.
	Status func(ctx context.Context, msg string)
}

// Receive is every resource's and data source's Configure: it returns the
// provider's data, or nil while there is none yet (Terraform configures
// resources before the provider when it validates) or when v is something
// else, which it reports in diags.
func Receive(v any, diags *diag.Diagnostics) *Data {
	if v == nil {
		return nil
	}
	d, ok := v.(*Data)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *providerdata.Data, got %T; this is a bug in the provider", v))
		return nil
	}
	return d
}
