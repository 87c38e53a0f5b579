package patch

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/projection"
)

func ownersValue(ctx context.Context, m map[string][]string, diags *diag.Diagnostics) types.Map {
	for k, v := range m {
		if v == nil {
			m[k] = []string{}
		}
	}
	v, d := types.MapValueFrom(ctx, ownersType, m)
	diags.Append(d...)
	return v
}

func projectionValue(ctx context.Context, p projection.Projection, diags *diag.Diagnostics) types.Map {
	v, d := types.MapValueFrom(ctx, types.StringType, map[string]string(p))
	diags.Append(d...)
	return v
}
