package connection

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// failure, so it is returned as it is (a 4xx is final), with two exceptions,
// both answers that say the server did not act on the request:
//   - a 429 or 503 without Retry-After (too many requests, or no server able to
//     take it: a load balancer whose API servers restart answers so): any
//     request whose body can be sent again is, after the same backoff and
//     within the same budget as a network failure, writes included. When the
//     budget runs out the last answer is returned as it is.
//   - a 429 or 5xx with Retry-After (the API server's priority and fairness, a
//     server shutting down): the request is sent again after the time it
//     asks, if that time fits in what is left of the request's budget, and
//     fails at once with a ThrottledError if it does not. client-go would
//     wait as told itself, up to ten times, each wait a new request here with
//     a budget of its own, so it never sees such an answer.

// A request's budget is cluster_connection.request_timeout
// (DefaultRequestTimeout when unset), counted from its first send: every
// attempt, every wait between two, and client-go's own retries end by then.
// client-go sends a GET again, up to ten times a second apart, when its error
// reads as a reset or a closed connection; its retries would each be a new
// request here, with a budget of its own (a GET through a connection that
// resets everything took 11 budgets and more), so the error this transport
// gives up with is not one client-go sends again (NetworkError.Error).
//
// The clients of one connection also share a budget: once the API server has
// answered none of their requests for a whole budget, a request is sent only
// as a probe (link.admit), so an outage fails a plan of many objects in about
// one budget, not one per wave of the objects the engine plans at once.

// refusedBudget is the shorter budget for a refused connection: the server
// may be restarting, but as often nothing listens at that address at all (a
// cluster that is down, a wrong host), which the user should hear soon.
const refusedBudget = 5 * time.Second

// attemptTimeout bounds one attempt of a request that is not a stream, when
// the request's budget is longer: its answer, headers and body, must have
// arrived by then. Nothing else does: an HTTP/1.1 connection that a proxy or a
// half-dead load balancer stops forwarding waits forever, and so does one
// HTTP/2 stream on a connection whose pings still pass. It is longer than the
// API server's own limit on a request (60 s by default, answered with a 504),
// so a slow server that is alive answers first. durations.AttemptTimeoutEnv
// overrides it, read when a connection's client is built.
const attemptTimeout = 75 * time.Second

// leastAttempt is how long a probe may take, and how long after a failure
// the next probe is sent, once a connection has answered nothing for a whole
// budget: a server that is back answers a probe at once, and one probe at a
// time finds it.
const leastAttempt = 2 * time.Second

// retryBackoff: the first retry after about 100 ms, doubling up to 2 s, each
// wait jittered so the many requests a cut connection fails at once do not
// come back in lockstep. (Step keeps returning the cap once it is reached.)
var retryBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 2 * time.Second}

// NetworkError is a request that got no answer from the API server: the
// connection broke, was refused or timed out. It names the request (method
// and path, which carry the resource and the object, never headers or
// credentials), how often it was sent and within what budget.
//
// It does not wrap the socket's error, and its text says what happened in
// words of its own: client-go sends a GET again when its error is ECONNRESET
// or reads as a reset or closed connection, and this transport has already
// spent the request's budget sending it again.
type NetworkError struct {
	Method string
	// Path is the URL path, with "?dryRun=All" when the request was a dry run.
	Path     string
	Attempts int
	Elapsed  time.Duration
	// Budget is the request's budget, cluster_connection.request_timeout.
	Budget time.Duration
	// Silent, when not zero, is how long the connection had answered no
	// request when this one gave up: the shared budget ran out first.
	Silent time.Duration
	// Write: the request may have changed something, so it was sent once
	// and its outcome is unknown. Anything else was sent again until the
	// budget or the deadline ran out. With no Attempts, the request was
	// not sent at all: the connection had answered nothing for a budget.
	Write bool
	// Err is the last attempt's failure, for the cause the message names
	// (when the request was not sent, the connection's last failure).
	Err error
}

// noAnswerWithin is an attempt that got no whole answer within its time (the
// attempt timeout, or what was left of the budget). It is a timeout of the
// network's (Timeout reports true), not the caller's deadline, which is why
// it is not context.DeadlineExceeded.
type noAnswerWithin time.Duration

func (e noAnswerWithin) Error() string {
	return fmt.Sprintf("no answer within %s (the connection stalled)", time.Duration(e).Round(100*time.Millisecond))
}
func (noAnswerWithin) Timeout() bool { return true }

func (e *NetworkError) Error() string {
	how := fmt.Sprintf("sent %d time(s) over %s", e.Attempts, e.Elapsed.Round(100*time.Millisecond))
	if e.Attempts == 0 {
		return fmt.Sprintf("network failure, no answer from the API server on this connection for %s, so %s %s was not sent; "+
			"the last request sent, moments ago, failed: %s", e.Silent.Round(100*time.Millisecond), e.Method, e.Path, cause(e.Err))
	}
	if e.Write {
		how = "a write, sent once; its outcome is unknown"
		if e.Attempts > 1 {
			// The attempts before were answered 429 or 503: not carried out.
			how = fmt.Sprintf("a write, sent %d times, declined by the server but the last; its outcome is unknown", e.Attempts)
		}
	} else if e.Silent > 0 {
		how += fmt.Sprintf("; the API server had answered nothing on this connection for %s", e.Silent.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("network failure, no answer from the API server to %s %s (%s): %s", e.Method, e.Path, how, cause(e.Err))
}

// refused reports a request whose last attempt found nothing listening.
func (e *NetworkError) refused() bool { return errors.Is(e.Err, syscall.ECONNREFUSED) }

// cause says what became of an attempt that got no answer, in words that
// client-go does not take for a reason to send a GET again.
func cause(err error) string {
	var stalled noAnswerWithin
	var timeout interface{ Timeout() bool }
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	switch {
	case errors.As(err, &stalled):
		return stalled.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens at that address"
	case errors.Is(err, syscall.ECONNRESET) || strings.Contains(msg, "connection reset"):
		return "the connection was reset"
	case utilnet.IsHTTP2ConnectionLost(err) || strings.Contains(msg, "GOAWAY"):
		return "the HTTP/2 connection was lost"
	case errors.As(err, &timeout) && timeout.Timeout():
		return "the connection timed out"
	}
	return "the connection was closed before the whole answer came"
}

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
	// budget is cluster_connection.request_timeout.
	budget time.Duration
	link   *link
}

// link is what the clients of one connection know of it together.
type link struct {
	mu sync.Mutex
	// silentSince is when the first attempt that failed since the last
	// answer of the API server (any answer, an error status too) was sent;
	// zero after an answer.
	silentSince time.Time
	// lastFailure is when the last attempt failed; probing, that a probe is
	// out (admit).
	lastFailure time.Time
	lastCause   error
	probing     bool
}

func (l *link) answered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.silentSince, l.lastFailure = time.Time{}, time.Time{}
}

// failed records an attempt sent at sent that got no answer, and why.
func (l *link) failed(sent time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.silentSince.IsZero() || sent.Before(l.silentSince) {
		l.silentSince = sent
	}
	l.lastFailure, l.lastCause = time.Now(), err
}

func (l *link) silent() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.silentSince
}

// last is why the last attempt got no answer.
func (l *link) last() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastCause
}

// admit says whether a request may be sent now. Any may, unless the
// connection has answered nothing for a whole budget: then one probe at a
// time, no sooner than leastAttempt after the last failure, and the others
// fail at once, unsent, rather than each wait for a link known to be dead.
// A probe's sender calls probed when it is done.
func (l *link) admit(now time.Time, budget time.Duration) (ok, probe bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.silentSince.IsZero() || now.Before(l.silentSince.Add(budget)) {
		return true, false
	}
	if l.probing || now.Before(l.lastFailure.Add(leastAttempt)) {
		return false, false
	}
	l.probing = true
	return true, true
}

func (l *link) probed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
}

// retryNetworkFailures is the wrapper of one connection's transports: every
// transport it wraps has budget and shares one link.
func retryNetworkFailures(budget time.Duration) func(http.RoundTripper) http.RoundTripper {
	shared := &link{}
	limit := durations.AttemptTimeout(attemptTimeout)
	return func(next http.RoundTripper) http.RoundTripper {
		return &retryingTransport{next: next, sleep: sleepContext, limit: limit, budget: budget, link: shared}
	}
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

// end is when a request sent at start must be done: its own budget's end,
// or the connection's, when the API server has answered nothing since a
// failure that came first.
func (t *retryingTransport) end(start time.Time) (end time.Time, sharedEnd bool) {
	end = start.Add(t.budget)
	if since := t.link.silent(); !since.IsZero() && since.Add(t.budget).Before(end) {
		return since.Add(t.budget), true
	}
	return end, false
}

// attemptEnd is when an attempt begun now is cut: at the request's end, but
// no sooner than leastAttempt from now within the request's own budget, and
// no later than the attempt timeout.
func (t *retryingTransport) attemptEnd(start, now time.Time) time.Time {
	end, _ := t.end(start)
	if least := now.Add(leastAttempt); end.Before(least) {
		end = least
	}
	if own := start.Add(t.budget); own.Before(end) {
		end = own
	}
	if limit := now.Add(t.limit); limit.Before(end) {
		end = limit
	}
	return end
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
	failure := func(attempt int, err error, write bool) *NetworkError {
		ne := &NetworkError{Method: req.Method, Path: described, Attempts: attempt, Elapsed: time.Since(start),
			Budget: t.budget, Write: write, Err: err}
		if _, shared := t.end(start); shared && (!write || attempt == 0) {
			ne.Silent = time.Since(t.link.silent())
		}
		return ne
	}
	admitted, probe := t.link.admit(start, t.budget)
	if !admitted {
		return nil, failure(0, t.link.last(), write)
	}
	if probe {
		defer t.link.probed()
	}
	var firstRefusal time.Time
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
		sentAt := time.Now()
		resp, err := t.attempt(sent, t.attemptEnd(start, sentAt))
		var why string
		var asked time.Duration // what Retry-After asked for
		waits := false          // the answer asked to be sent again later
		switch {
		case err == nil && replayable && asksToWait(resp):
			t.link.answered()
			waits = true
			asked, _ = retryAfter(resp)
			why = fmt.Sprintf("the API server answered %d with Retry-After: %s", resp.StatusCode, asked)
		case err == nil && busy(resp) && replayable:
			t.link.answered()
			why = fmt.Sprintf("the API server answered %d without Retry-After", resp.StatusCode)
		case networkFailure(err) && (write || !replayable):
			t.link.failed(sentAt, err)
			// A write may have been carried out: its caller settles that.
			return nil, failure(attempt, err, true)
		case networkFailure(err):
			t.link.failed(sentAt, err)
			why = err.Error()
		default:
			if err == nil {
				t.link.answered()
			}
			return resp, err
		}
		delay := max(backoff.Step(), asked)
		end, _ := t.end(start)
		if errors.Is(err, syscall.ECONNREFUSED) {
			if firstRefusal.IsZero() {
				firstRefusal = time.Now()
			}
			if refused := firstRefusal.Add(refusedBudget); refused.Before(end) {
				end = refused
			}
		}
		now := time.Now()
		limit, byDeadline := end, false
		if deadline, ok := ctx.Deadline(); ok && deadline.Before(end) {
			limit, byDeadline = deadline, true
		}
		giveUp := now.Add(delay).After(limit)
		if giveUp && waits && now.Add(asked).After(limit) {
			// The server named its time, and there is not that much left:
			// say so now, instead of sending the request again to be told
			// the same, or waiting past the budget the error states.
			te := &ThrottledError{Method: req.Method, Path: described, Code: resp.StatusCode, RetryAfter: asked,
				Left: max(limit.Sub(now), 0), Budget: t.budget, ByDeadline: byDeadline, Attempts: attempt, Server: statusOf(resp)}
			_ = resp.Body.Close()
			return nil, te
		}
		if giveUp || t.sleep(ctx, delay) != nil {
			if resp != nil {
				// The server's own answer, for the caller to report, and
				// not for client-go to wait for and send again.
				resp.Header.Del("Retry-After")
				return resp, nil
			}
			return nil, failure(attempt, err, false)
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
// names no time to come back: 429 or 503 without a Retry-After that can be
// read (with one, asksToWait).
func busy(resp *http.Response) bool {
	_, asked := retryAfter(resp)
	return (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && !asked
}

// asksToWait reports an answer client-go would wait for and send again: a 429
// or any 5xx with a Retry-After. The API server sends one only when it did
// not act on the request (priority and fairness turning it away, a server
// shutting down, a timeout before the handler ran), so a write is safe to
// send again too.
func asksToWait(resp *http.Response) bool {
	_, asked := retryAfter(resp)
	return asked && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= http.StatusInternalServerError)
}

// retryAfter is an answer's Retry-After: whole seconds, as client-go and the
// API server write it, or an HTTP date. A value that is neither asks for
// nothing.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second, true
	}
	if when, err := http.ParseTime(v); err == nil {
		return max(time.Until(when), 0), true
	}
	return 0, false
}

// statusOf is the metav1.Status an answer carries, when it carries one (the
// API server's answers do; a load balancer's page does not).
func statusOf(resp *http.Response) *metav1.Status {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil
	}
	var status metav1.Status
	if json.Unmarshal(body, &status) != nil || status.Kind != "Status" {
		return nil
	}
	return &status
}

// ThrottledError is a request the server asked to send again later (a 429 or
// a 5xx with Retry-After) when less of the request's budget was left than
// it asked for: the request was not sent again. It is the server's answer
// (APIStatus, with the server's code), so nothing reads it as a lost
// connection or as a verdict on the object.
type ThrottledError struct {
	Method string
	// Path is the URL path, with "?dryRun=All" when the request was a dry run.
	Path string
	// Code is the server's status code; RetryAfter what it asked to wait.
	Code       int
	RetryAfter time.Duration
	// Left is what was left of the budget (or of the operation's deadline,
	// ByDeadline) when the answer came.
	Left       time.Duration
	Budget     time.Duration
	ByDeadline bool
	// Attempts is how often the request was sent.
	Attempts int
	// Server is the server's own Status, when it sent one.
	Server *metav1.Status
}

func (e *ThrottledError) Error() string {
	limit := fmt.Sprintf("the %s left of the request's budget of %s (cluster_connection.request_timeout)",
		e.Left.Round(100*time.Millisecond), e.Budget)
	if e.ByDeadline {
		limit = fmt.Sprintf("the %s left before the operation's deadline", e.Left.Round(100*time.Millisecond))
	}
	msg := fmt.Sprintf("the API server answered %d %s to %s %s (sent %d time(s)) and asked for it to be sent again "+
		"in %s (Retry-After), more than %s, so it was not sent again", e.Code, http.StatusText(e.Code), e.Method, e.Path,
		e.Attempts, e.RetryAfter, limit)
	if e.Server != nil && e.Server.Message != "" {
		msg += "; the server said: " + e.Server.Message
	}
	return msg
}

// Status makes the error the server's answer for apierrors: its code and
// reason, and the time it asked for.
func (e *ThrottledError) Status() metav1.Status {
	reason := metav1.StatusReason("")
	if e.Server != nil {
		reason = e.Server.Reason
	}
	if reason == "" {
		reason = apierrors.NewGenericServerResponse(e.Code, e.Method, schema.GroupResource{}, "", "", 0, false).ErrStatus.Reason
	}
	return metav1.Status{Status: metav1.StatusFailure, Code: int32(e.Code), Reason: reason, Message: e.Error(),
		Details: &metav1.StatusDetails{RetryAfterSeconds: int32(e.RetryAfter / time.Second)}}
}

// Throttled reports a request the server asked to send again later than its
// budget allowed (ThrottledError): sending it again at once would be told
// the same.
func Throttled(err error) bool {
	var te *ThrottledError
	return errors.As(err, &te)
}

// attempt sends a request once and, unless its answer is a stream, reads the
// whole answer by cut. A connection that breaks while the answer is read is
// the same failure as one that breaks before: reading it here is what lets a
// read be sent again, and a write's be reported as a network failure, not as
// a bad body.
func (t *retryingTransport) attempt(req *http.Request, cut time.Time) (*http.Response, error) {
	if streaming(req) {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithDeadline(req.Context(), cut)
	defer cancel()
	begun := time.Now()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err == nil && resp.StatusCode != http.StatusSwitchingProtocols {
		if err = readAhead(resp); err != nil {
			resp = nil
		}
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
		// Our cut, not the caller's deadline.
		err = noAnswerWithin(max(cut.Sub(begun), 0)) // 0: begun when the budget had run out
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
