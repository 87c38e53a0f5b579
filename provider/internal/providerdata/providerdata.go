// Package providerdata is what the provider hands every resource in Configure:
// the shared client cache and the provider-level settings.
package providerdata

import (
	"fmt"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
)

// Data is passed as ResourceData and DataSourceData.
type Data struct {
	Clients           *connection.Cache
	OwnershipMessages ownership.Verbosity
}

// From converts the value a resource receives in Configure.
func From(v any) (*Data, error) {
	d, ok := v.(*Data)
	if !ok {
		return nil, fmt.Errorf("expected *providerdata.Data, got %T; this is a bug in the provider", v)
	}
	return d, nil
}
