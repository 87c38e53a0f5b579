package bridge

import (
	"context"
	"fmt"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/k8sconnect/k8sconnect/provider/plugin/pulumiop"
)

// Operations wraps the plugin's server so that a create, update or delete
// runs in a context that says what the engine's request says and the
// bridge's framework provider drops:
//
//   - customTimeouts, which the framework provider takes and never uses
//     (its Create, Update and Delete are given the timeout in seconds and
//     drop it). Here it becomes a deadline on the operation's context, the
//     context the provider's resource runs in, so every wait, retry and
//     hook of the operation ends by then, as the timeouts block ends them
//     under Terraform. The deadline's cause names the setting, so the
//     provider's error says customTimeouts.create ran out, not
//     timeouts.create. A preview does nothing that a deadline should cut
//     short, and a read has no customTimeouts (pulumi/pulumi#15636).
//   - that a create or an update is not a preview: the bridge plans it and
//     applies that plan in the same call, shown to nobody, and a resource
//     that knows it may plan less (pulumiop).
func Operations(s pulumirpc.ResourceProviderServer) pulumirpc.ResourceProviderServer {
	return &operations{s}
}

type operations struct {
	pulumirpc.ResourceProviderServer
}

func (s *operations) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	if !req.GetPreview() {
		var cancel context.CancelFunc
		ctx, cancel = withCustomTimeout(pulumiop.WithApplyFollowing(ctx), "create", req.GetTimeout())
		defer cancel()
	}
	return s.ResourceProviderServer.Create(ctx, req)
}

func (s *operations) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	if !req.GetPreview() {
		var cancel context.CancelFunc
		ctx, cancel = withCustomTimeout(pulumiop.WithApplyFollowing(ctx), "update", req.GetTimeout())
		defer cancel()
	}
	return s.ResourceProviderServer.Update(ctx, req)
}

func (s *operations) Delete(ctx context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
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
