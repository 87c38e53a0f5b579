package bridge

import (
	"context"
	"fmt"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"
)

// CustomTimeouts wraps the plugin's server so that create, update and delete
// honour the resource option customTimeouts, which the bridge's framework
// provider takes and never uses (its Create, Update and Delete are given the
// timeout in seconds and drop it). The engine sends each operation its
// customTimeouts in the request; here it becomes a deadline on the
// operation's context, which is the context the provider's resource runs
// in, so every wait, retry and hook of the operation ends by then, as the
// timeouts block ends them under Terraform. The deadline's cause names the
// setting, so the provider's error says customTimeouts.create ran out, not
// timeouts.create. A preview does nothing that a deadline should cut short,
// and a read has no customTimeouts (pulumi/pulumi#15636).
func CustomTimeouts(s pulumirpc.ResourceProviderServer) pulumirpc.ResourceProviderServer {
	return &customTimeouts{s}
}

type customTimeouts struct {
	pulumirpc.ResourceProviderServer
}

func (s *customTimeouts) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if !req.GetPreview() {
		var cancel context.CancelFunc
		ctx, cancel = withCustomTimeout(ctx, "create", req.GetTimeout())
		defer cancel()
	}
	return s.ResourceProviderServer.Create(ctx, req)
}

func (s *customTimeouts) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	if !req.GetPreview() {
		var cancel context.CancelFunc
		ctx, cancel = withCustomTimeout(ctx, "update", req.GetTimeout())
		defer cancel()
	}
	return s.ResourceProviderServer.Update(ctx, req)
}

func (s *customTimeouts) Delete(ctx context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	ctx, cancel := withCustomTimeout(ctx, "delete", req.GetTimeout())
	defer cancel()
	return s.ResourceProviderServer.Delete(ctx, req)
}

// withCustomTimeout bounds ctx by seconds (none when 0: customTimeouts unset).
func withCustomTimeout(ctx context.Context, op string, seconds float64) (context.Context, context.CancelFunc) {
	if seconds <= 0 {
		return ctx, func() {}
	}
	limit := time.Duration(seconds * float64(time.Second))
	return context.WithDeadlineCause(ctx, time.Now().Add(limit), &customTimeoutExceeded{op: op, limit: limit})
}

// customTimeoutExceeded is the cause of an operation's context whose
// customTimeouts ran out. The provider knows it by its OperationTimeout
// method (provider/internal/optimeout, which this module cannot import).
type customTimeoutExceeded struct {
	op    string
	limit time.Duration
}

func (e *customTimeoutExceeded) Error() string {
	return fmt.Sprintf("the %s timeout (customTimeouts.%s = %q) ran out", e.op, e.op, e.limit.String())
}

// Is makes it a context.DeadlineExceeded, as a context's own deadline is.
func (e *customTimeoutExceeded) Is(target error) bool { return target == context.DeadlineExceeded }

// OperationTimeout is the operation, the setting and its limit.
func (e *customTimeoutExceeded) OperationTimeout() (op, setting string, limit time.Duration) {
	return e.op, "customTimeouts." + e.op, e.limit
}
