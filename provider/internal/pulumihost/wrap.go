package pulumihost

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// wrappedResource passes every call to inner and puts the diagnostics it
// returns in Pulumi's terms. Configure, ModifyPlan and ValidateConfig do
// nothing when inner has none, as the framework would.
type wrappedResource struct {
	inner resource.Resource
	host  *Host
}

var (
	_ resource.ResourceWithConfigure      = (*wrappedResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*wrappedResource)(nil)
	_ resource.ResourceWithValidateConfig = (*wrappedResource)(nil)
	_ resource.ResourceWithImportState    = (*importableResource)(nil)
	_ resource.ResourceWithMoveState      = (*importableResource)(nil)
)

func (w *wrappedResource) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	w.inner.Metadata(ctx, req, resp)
}

func (w *wrappedResource) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	w.inner.Schema(ctx, req, resp)
}

func (w *wrappedResource) Configure(ctx context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if r, ok := w.inner.(resource.ResourceWithConfigure); ok {
		r.Configure(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *wrappedResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if r, ok := w.inner.(resource.ResourceWithValidateConfig); ok {
		r.ValidateConfig(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *wrappedResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r, ok := w.inner.(resource.ResourceWithModifyPlan); ok {
		r.ModifyPlan(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *wrappedResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	w.inner.Create(ctx, req, resp)
	w.host.speak(&resp.Diagnostics)
}

func (w *wrappedResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	w.inner.Read(ctx, req, resp)
	w.host.speak(&resp.Diagnostics)
}

func (w *wrappedResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	w.inner.Update(ctx, req, resp)
	w.host.speak(&resp.Diagnostics)
}

func (w *wrappedResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	w.inner.Delete(ctx, req, resp)
	w.host.speak(&resp.Diagnostics)
}

// importableResource is wrappedResource for a resource that imports (and
// takes moved state).
type importableResource struct{ *wrappedResource }

func (w *importableResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r, ok := w.inner.(resource.ResourceWithImportState); ok {
		r.ImportState(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *importableResource) MoveState(ctx context.Context) []resource.StateMover {
	r, ok := w.inner.(resource.ResourceWithMoveState)
	if !ok {
		return nil
	}
	movers := r.MoveState(ctx)
	for i, m := range movers {
		move := m.StateMover
		movers[i].StateMover = func(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
			move(ctx, req, resp)
			w.host.speak(&resp.Diagnostics)
		}
	}
	return movers
}

// wrappedDataSource is wrappedResource for a data source.
type wrappedDataSource struct {
	inner datasource.DataSource
	host  *Host
}

var (
	_ datasource.DataSourceWithConfigure      = (*wrappedDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*wrappedDataSource)(nil)
)

func (w *wrappedDataSource) Metadata(ctx context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	w.inner.Metadata(ctx, req, resp)
}

func (w *wrappedDataSource) Schema(ctx context.Context, req datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	w.inner.Schema(ctx, req, resp)
}

func (w *wrappedDataSource) Configure(ctx context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	if d, ok := w.inner.(datasource.DataSourceWithConfigure); ok {
		d.Configure(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *wrappedDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	if d, ok := w.inner.(datasource.DataSourceWithValidateConfig); ok {
		d.ValidateConfig(ctx, req, resp)
		w.host.speak(&resp.Diagnostics)
	}
}

func (w *wrappedDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	w.inner.Read(ctx, req, resp)
	w.host.speak(&resp.Diagnostics)
}
