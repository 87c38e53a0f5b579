package connection

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
)

// DefaultRequestTimeout is how long a request may take, its retries
// included, when cluster_connection.request_timeout is not set. It is long
// enough to ride out a flaky link or an API server that restarts behind a
// load balancer, short enough that an outage is reported while the user
// still waits for it.
const DefaultRequestTimeout = 20 * time.Second

// Budget is the connection's request_timeout, or
// DefaultRequestTimeout when it is not set.
func (m Model) Budget() (time.Duration, error) {
	if m.RequestTimeout.IsNull() || m.RequestTimeout.IsUnknown() {
		return DefaultRequestTimeout, nil
	}
	d, err := durations.Parse(m.RequestTimeout.ValueString())
	if err != nil {
		return 0, fmt.Errorf("cluster_connection.request_timeout %v", err)
	}
	return d, nil
}

// requestTimeoutValidator refuses a request_timeout that is not a positive
// duration when the configuration is validated, before any plan. Its error
// is attached to no attribute, for the reason ReportClientError gives: the
// engines print the source of the attribute an error names, and the source
// of cluster_connection holds its credentials.
type requestTimeoutValidator struct{}

var _ validator.String = requestTimeoutValidator{}

func (requestTimeoutValidator) Description(context.Context) string {
	return "a positive duration such as 20s or 2m"
}

func (v requestTimeoutValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (requestTimeoutValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := (Model{RequestTimeout: req.ConfigValue}).Budget(); err != nil {
		ReportClientError(&resp.Diagnostics, err)
	}
}
