package ssa

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// RetryWindow is how long a write the provider repeats is repeated: an apply
// waiting for a kind or a namespace another resource of the run is making,
// and a read-modify-write that a concurrent write or a cut connection got in
// the way of.
const RetryWindow = 30 * time.Second

// Retry calls f until it succeeds, fails in a way retryable rejects, or
// RetryWindow has passed, backing off from 250ms to at most 4s between calls.
// A network failure shortens the window to the budget of the request it
// ended, from when that was sent (cluster_connection.request_timeout, which
// the error states):
// RetryWindow is for waits on the run's other resources, not on a link that
// is down. It returns f's last error. (wait.ExponentialBackoff stops as soon
// as its cap is reached, long before the window ends; hence this loop.)
func Retry(ctx context.Context, retryable func(error) bool, f func(context.Context) error) error {
	deadline := time.Now().Add(RetryWindow)
	delay := 250 * time.Millisecond
	var faulted bool
	for {
		err := f(ctx)
		if end, ok := connection.BudgetEnd(err); ok && !faulted {
			faulted = true
			if end.Before(deadline) {
				deadline = end
			}
		}
		if err == nil || !retryable(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(time.Duration(float64(delay)*1.6), 4*time.Second)
	}
}

// Transient reports an error that says nothing about the request's fate (the
// connection broke, the server did not answer in time, or failed): a
// server-side apply is idempotent, so sending it again is safe. A 429 or 503
// is not: the transport has already sent it again for its budget, waiting as
// long as a Retry-After asked while that fitted in it (ADR 0014 point 7),
// so retrying here too made a persistent 503 fail after 50 s instead of 20.
// Nor is a request the server asked to send again later than its budget
// allowed, nor a read or dry run that got no answer, for the same reason, nor a
// failed TLS handshake or exec credential plugin: the connection's
// configuration is at fault, and the same request fails the same way.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || connection.Exhausted(err) || connection.Misconfigured(err) ||
		connection.ContentRefused(err) || connection.Throttled(err) || connection.NoVerdict(err) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsInternalError(err)
	}
	return true
}

// TransientOrConflict is Retry's rule for a read-modify-write: sent again
// when its fate is unknown, or when someone wrote the object between its
// read and its write (409), which a fresh read settles.
func TransientOrConflict(err error) bool { return Transient(err) || apierrors.IsConflict(err) }
