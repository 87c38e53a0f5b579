// Package durations is the one check of the duration arguments resources
// take (timeouts), so each says the same thing about a bad one.
package durations

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Validator accepts Go durations greater than zero ("90s", "15m").
type Validator struct{}

var _ validator.String = Validator{}

func (Validator) Description(context.Context) string {
	return "a positive duration such as 90s or 15m"
}

func (v Validator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (Validator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := Parse(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration", err.Error())
	}
}

// Parse reads a positive Go duration.
func Parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration; use a form such as \"90s\", \"15m\" or \"1h\"", s)
	}
	return d, nil
}

// PendingLeaseEnv overrides how long an unfinished create protects what it
// is creating from being taken over (a Go duration): for API servers slow
// enough to need longer, and for tests that need shorter.
const PendingLeaseEnv = "K8SCONNECT_CREATE_PENDING_LEASE"

// PendingLease is the lease of an unfinished create: def, unless
// PendingLeaseEnv holds a positive duration.
func PendingLease(def time.Duration) time.Duration {
	return fromEnv(PendingLeaseEnv, def)
}

// AttemptTimeoutEnv overrides how long one attempt of an API request may go
// without its whole answer before it is given up as a stalled connection (a
// Go duration): for links slow enough to need longer, and for tests that
// need shorter.
const AttemptTimeoutEnv = "K8SCONNECT_REQUEST_ATTEMPT_TIMEOUT"

// AttemptTimeout is that limit: def, unless AttemptTimeoutEnv holds a
// positive duration.
func AttemptTimeout(def time.Duration) time.Duration {
	return fromEnv(AttemptTimeoutEnv, def)
}

func fromEnv(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}
