// Package rpccontext lets go of each request's context when the request
// returns.
//
// terraform-plugin-framework (v1.19) keeps the cancel function of every
// request's context until the engine calls StopProvider, so that it can cancel
// them all then; an engine that is not interrupted never calls it. Each kept
// context holds its parents: the gRPC stream and the logger options the SDK
// copies into every request. That is about 50 KB per object in a run, the
// provider's memory grows with every object it plans or applies, and a run of
// 1,000 objects passed 100 MB (make bench).
//
// Release wraps the server so that the framework receives, for each request, a
// context that forwards to the request's own until the request returns, and
// forwards to nothing after that. The framework then keeps only that small
// forwarder, and cancelling it on StopProvider still reaches every request that
// is running.
package rpccontext

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Release wraps a provider server (see the package comment).
func Release(s tfprotov6.ProviderServer) tfprotov6.ProviderServer { return server{s} }

type server struct{ tfprotov6.ProviderServer }

// scoped runs one request with a forwarding context, and cuts the forwarding
// when it returns.
func scoped[Req, Resp any](ctx context.Context, req Req, call func(context.Context, Req) (Resp, error)) (Resp, error) {
	f := &forwarder{parent: ctx, done: ctx.Done()}
	defer f.release()
	return call(f, req)
}

// The requests the framework answers once per resource and object. The rest
// (schema, configure, stop) are made a few times per run and pass through.

func (s server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ValidateResourceConfig)
}

func (s server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return scoped(ctx, req, s.ProviderServer.UpgradeResourceState)
}

func (s server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ReadResource)
}

func (s server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return scoped(ctx, req, s.ProviderServer.PlanResourceChange)
}

func (s server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ApplyResourceChange)
}

func (s server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ImportResourceState)
}

func (s server) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return scoped(ctx, req, s.ProviderServer.MoveResourceState)
}

func (s server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ValidateDataResourceConfig)
}

func (s server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return scoped(ctx, req, s.ProviderServer.ReadDataSource)
}

// forwarder is a context that answers as its parent does until released, and
// as a cancelled context with no values after. Its Done channel is the
// parent's, which the standard library's cancel propagation relies on.
type forwarder struct {
	mu     sync.RWMutex
	parent context.Context
	done   <-chan struct{}
}

func (f *forwarder) get() context.Context {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.parent
}

func (f *forwarder) release() {
	f.mu.Lock()
	f.parent = nil
	f.mu.Unlock()
}

func (f *forwarder) Deadline() (time.Time, bool) {
	if p := f.get(); p != nil {
		return p.Deadline()
	}
	return time.Time{}, false
}

func (f *forwarder) Done() <-chan struct{} { return f.done }

func (f *forwarder) Err() error {
	if p := f.get(); p != nil {
		return p.Err()
	}
	return context.Canceled
}

func (f *forwarder) Value(key any) any {
	if p := f.get(); p != nil {
		return p.Value(key)
	}
	return nil
}
