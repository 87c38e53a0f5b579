package connection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
)

// Network failures are retried here, in one transport wrapper that every
// client of a connection shares (dynamic, metadata, discovery, and the
// rest.Config handed to Helm), rather than around each call site: the
// transport is the one place that sees every request with its method and
// query, so it can tell a read or a dry run (safe to send again) from a
// write, and it sees the failure before client-go turns it into a result.
// Writes are not resent here; their callers settle an unknown outcome by
// reading the object (docs/adr/0012-network-failures.md).
//
// An HTTP answer of any status is the server speaking, never a network
// failure, so it is returned as it is (a 4xx is final, and 429/503 with
// Retry-After are left to client-go's own handling), with one exception: a
// 429 or 503 without Retry-After. Both say the server did not act on the
// request (too many requests, or no server able to take it: a load balancer
// whose API servers restart answers so), so any request whose body can be
// sent again is, after the same backoff and within the same budget as a
// network failure, writes included. When the budget runs out the last answer
// is returned as it is.

// retryBudget bounds how long an idempotent request is tried again after
// broken connections, resets and timeouts, within the request's own deadline.
// It is long enough to ride out a flaky link or an API server that restarts
// behind a load balancer, short enough that an outage is reported while the
// user still waits for it.
const retryBudget = 20 * time.Second

// refusedBudget is the shorter budget for a refused connection: the server
// may be restarting, but as often nothing listens at that address at all (a
// cluster that is down, a wrong host), which the user should hear soon.
const refusedBudget = 5 * time.Second

// attemptTimeout bounds one attempt of a request that is not a stream: its
// answer, headers and body, must have arrived by then. Nothing else does: an
// HTTP/1.1 connection that a proxy or a half-dead load balancer stops
// forwarding waits forever, and so does one HTTP/2 stream on a connection
// whose pings still pass. It is longer than the API server's own limit on a
// request (60 s by default, answered with a 504), so a slow server that is
// alive answers first. durations.AttemptTimeoutEnv overrides it, read when
// a connection's client is built.
const attemptTimeout = 75 * time.Second

// retryBackoff: the first retry after about 100 ms, doubling up to 2 s, each
// wait jittered so the many requests a cut connection fails at once do not
// come back in lockstep. (Step keeps returning the cap once it is reached.)
var retryBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 2 * time.Second}

// NetworkError is a request that got no answer from the API server: the
// connection broke, was refused or timed out. It names the request (method
// and path, which carry the resource and the object, never headers or
// credentials) and how often it was sent.
type NetworkError struct {
	Method string
	// Path is the URL path, with "?dryRun=All" when the request was a dry run.
	Path     string
	Attempts int
	Elapsed  time.Duration
	// Write: the request may have changed something, so it was sent once
	// and its outcome is unknown. Anything else was sent again until the
	// budget or the deadline ran out.
	Write bool
	Err   error
}

// noAnswerWithin is an attempt that got no whole answer within attemptTimeout.
// It is a timeout of the network's (Timeout reports true), not the caller's
// deadline, which is why it is not context.DeadlineExceeded.
type noAnswerWithin time.Duration

func (e noAnswerWithin) Error() string {
	return fmt.Sprintf("no answer within %s (the connection stalled)", time.Duration(e))
}
func (noAnswerWithin) Timeout() bool { return true }

func (e *NetworkError) Error() string {
	how := fmt.Sprintf("sent %d time(s) over %s", e.Attempts, e.Elapsed.Round(100*time.Millisecond))
	if e.Write {
		how = "a write, sent once; its outcome is unknown"
		if e.Attempts > 1 {
			// The attempts before were answered 429 or 503: not carried out.
			how = fmt.Sprintf("a write, sent %d times, declined by the server but the last; its outcome is unknown", e.Attempts)
		}
	}
	return fmt.Sprintf("network failure, no answer from the API server to %s %s (%s): %v", e.Method, e.Path, how, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }

// NoAnswer is the summary of a diagnostic for a request the network lost, so
// that no such failure reads as the server's refusal.
const NoAnswer = "No answer from the API server (network failure)"

// IsNetworkFailure reports an error that is a request the network lost: no
// answer came, so nothing can be concluded about the object.
func IsNetworkFailure(err error) bool {
	var ne *NetworkError
	return errors.As(err, &ne) || networkFailure(err)
}

// networkFailure classifies a transport error: true when the connection
// broke or timed out before an answer arrived, so the same request may
// succeed if sent again. A context that was cancelled or ran out is the
// caller giving up, TLS and DNS failures are configuration, and an API
// status is an answer: none of them is retried.
func networkFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	// An API status is an answer, even one that quotes a network error of
	// the server's own (a webhook it could not reach).
	var status apierrors.APIStatus
	var dns *net.DNSError
	if errors.As(err, &status) || errors.As(err, &dns) || untrustedServer(err) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// net/http reports a connection the server closed as the request went out,
	// and HTTP/2 a GOAWAY or a lost connection, in text alone.
	msg := err.Error()
	if utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) || strings.Contains(msg, "GOAWAY") ||
		strings.Contains(msg, "server closed idle connection") || strings.Contains(msg, "transport connection broken") {
		return true
	}
	var timeout interface{ Timeout() bool }
	return errors.As(err, &timeout) && timeout.Timeout()
}

// idempotent reports a request that changes nothing, so sending it twice is
// the same as sending it once: reads and discovery, and dry runs of any verb.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	return dryRun(req)
}

func dryRun(req *http.Request) bool {
	for _, v := range req.URL.Query()["dryRun"] {
		if v == metav1.DryRunAll {
			return true
		}
	}
	return false
}

// streaming reports a request whose answer stays open (a watch, a followed
// log, a protocol upgrade): its body is handed on as it comes, not read ahead.
func streaming(req *http.Request) bool {
	q := req.URL.Query()
	return q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true" ||
		strings.Contains(req.URL.Path, "/watch/") || req.Header.Get("Upgrade") != ""
}

// retryingTransport sends idempotent requests again when the network fails,
// and wraps every network failure in a NetworkError that names the request.
type retryingTransport struct {
	next http.RoundTripper
	// sleep waits between attempts; tests shorten it.
	sleep func(context.Context, time.Duration) error
	// limit is attemptTimeout, or what durations.AttemptTimeoutEnv says.
	limit time.Duration
}

func retryNetworkFailures(next http.RoundTripper) http.RoundTripper {
	return &retryingTransport{next: next, sleep: sleepContext, limit: durations.AttemptTimeout(attemptTimeout)}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (t *retryingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	described := req.URL.Path
	if dryRun(req) {
		described += "?dryRun=All"
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	write := !idempotent(req)

	ctx := req.Context()
	start := time.Now()
	var firstFailure time.Time
	backoff := retryBackoff
	for attempt := 1; ; attempt++ {
		sent := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			sent = req.Clone(ctx)
			sent.Body = body
		}
		resp, err := t.attempt(sent)
		var why string
		switch {
		case err == nil && busy(resp) && replayable:
			why = fmt.Sprintf("the API server answered %d without Retry-After", resp.StatusCode)
		case networkFailure(err) && (write || !replayable):
			// A write may have been carried out: its caller settles that.
			return nil, &NetworkError{Method: req.Method, Path: described, Attempts: attempt,
				Elapsed: time.Since(start), Write: true, Err: err}
		case networkFailure(err):
			why = err.Error()
		default:
			return resp, err
		}
		if firstFailure.IsZero() {
			// The budget counts from the first failure, so that an attempt
			// that stalled until attemptTimeout is still tried again.
			firstFailure = time.Now()
		}
		budget := retryBudget
		if errors.Is(err, syscall.ECONNREFUSED) {
			budget = refusedBudget
		}
		delay := backoff.Step()
		giveUp := time.Now().Add(delay).After(firstFailure.Add(budget))
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(delay).After(deadline) {
			giveUp = true
		}
		if giveUp || t.sleep(ctx, delay) != nil {
			if resp != nil {
				return resp, nil // the server's own answer, for the caller to report
			}
			return nil, &NetworkError{Method: req.Method, Path: described, Attempts: attempt,
				Elapsed: time.Since(start), Err: err}
		}
		if resp != nil {
			_ = resp.Body.Close()
		}
		tflog.Debug(ctx, "the request got no usable answer; sending it again", map[string]any{
			"request": req.Method + " " + described, "attempt": attempt, "why": why, "wait": delay.String(),
		})
	}
}

// busy reports an answer that says the server did not act on the request and
// names no time to come back: 429 or 503 without Retry-After. (With it,
// client-go waits as told and sends the request again itself.)
func busy(resp *http.Response) bool {
	return (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) &&
		resp.Header.Get("Retry-After") == ""
}

// attempt sends a request once and, unless its answer is a stream, reads the
// whole answer within attemptTimeout. A connection that breaks while the
// answer is read is the same failure as one that breaks before: reading it
// here is what lets a read be sent again, and a write's be reported as a
// network failure, not as a bad body.
func (t *retryingTransport) attempt(req *http.Request) (*http.Response, error) {
	if streaming(req) {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.limit)
	defer cancel()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err == nil && resp.StatusCode != http.StatusSwitchingProtocols {
		if err = readAhead(resp); err != nil {
			resp = nil
		}
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
		// Our limit, not the caller's deadline.
		err = noAnswerWithin(t.limit)
	}
	return resp, err
}

// readAhead reads a whole answer into memory, so a connection cut halfway
// through the body fails the attempt instead of the caller. client-go reads
// every non-streaming answer whole anyway.
func readAhead(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}
