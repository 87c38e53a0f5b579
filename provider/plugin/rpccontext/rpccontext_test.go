package rpccontext

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

type key struct{}

// keeper behaves as terraform-plugin-framework does: it keeps a cancellable
// child of every request's context after the request returns.
type keeper struct {
	tfprotov6.ProviderServer
	kept   []context.Context
	during func(ctx context.Context)
}

func (k *keeper) PlanResourceChange(ctx context.Context, _ *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	child, cancel := context.WithCancel(ctx)
	_ = cancel // kept, as the framework keeps it, until StopProvider
	k.kept = append(k.kept, child)
	if k.during != nil {
		k.during(child)
	}
	return &tfprotov6.PlanResourceChangeResponse{}, nil
}

func TestRelease_letsGoOfTheRequestAfterItReturns(t *testing.T) {
	k := &keeper{}
	var sawValue any
	var sawErr error
	k.during = func(ctx context.Context) { sawValue, sawErr = ctx.Value(key{}), ctx.Err() }
	req, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "request logger"))
	defer cancel()

	if _, err := Release(k).PlanResourceChange(req, &tfprotov6.PlanResourceChangeRequest{}); err != nil {
		t.Fatal(err)
	}
	if sawValue != "request logger" || sawErr != nil {
		t.Errorf("during the request the context must be the request's: value %v, err %v", sawValue, sawErr)
	}
	// What the framework kept must no longer reach the request's values
	// (the loggers and the gRPC stream the memory went to).
	if v := k.kept[0].Value(key{}); v != nil {
		t.Errorf("the kept context still reaches the request's values (%v): the request is retained", v)
	}
	f := &forwarder{parent: req, done: req.Done()}
	f.release()
	if !errors.Is(f.Err(), context.Canceled) || f.Value(key{}) != nil {
		t.Errorf("a released forwarder reports err %v, value %v; want context.Canceled and nothing", f.Err(), f.Value(key{}))
	}

	// Without Release, the same server keeps the request: the check above can fail.
	k2 := &keeper{}
	if _, err := k2.PlanResourceChange(req, &tfprotov6.PlanResourceChangeRequest{}); err != nil {
		t.Fatal(err)
	}
	if k2.kept[0].Value(key{}) == nil {
		t.Fatal("the unwrapped keeper should retain the request's values")
	}
}

func TestRelease_cancellationStillReachesARunningRequest(t *testing.T) {
	req, cancel := context.WithCancel(context.Background())
	deadline := time.Now().Add(time.Hour)
	req, cancelDeadline := context.WithDeadline(req, deadline)
	defer cancelDeadline()
	k := &keeper{during: func(ctx context.Context) {
		if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("deadline %v %v, want the request's %v", d, ok, deadline)
		}
		cancel() // the engine goes away mid-request
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Error("cancelling the request did not reach the context the framework holds")
		}
	}}
	if _, err := Release(k).PlanResourceChange(req, &tfprotov6.PlanResourceChangeRequest{}); err != nil {
		t.Fatal(err)
	}
}
