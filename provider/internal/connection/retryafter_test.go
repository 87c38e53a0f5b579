package connection

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ktypes "k8s.io/apimachinery/pkg/types"
)

// asking is a busyServer that answers JSON an API client decodes: its
// Status, then a ConfigMap.
type asking struct{ *busyServer }

func (a asking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	a.busyServer.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.Code)
	body := rec.Body.String()
	if rec.Code == http.StatusOK {
		body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one","namespace":"ns"}}`
	}
	_, _ = w.Write([]byte(body))
}

// An answer that asks to be sent again later (429 or 503 with Retry-After)
// is waited for within the request's budget, through client-go as a
// connection's clients use it: a read and a write alike are sent again
// after the time asked, once, and succeed.
func TestRetryAfterWithinTheBudgetIsHonoured(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		b := &busyServer{times: 1, status: status, header: http.Header{"Retry-After": {"1"}}}
		srv := httptest.NewServer(asking{b})
		cms := dynamicVia(t, srv, 3*time.Second)
		start := time.Now()
		_, err := cms.Get(context.Background(), "one", metav1.GetOptions{})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%d, then the object: %v", status, err)
		}
		if n := len(b.requests()); n != 2 || took < time.Second {
			t.Errorf("%d with Retry-After 1: %d request(s) in %s, want 2, the second a second later at least", status, n, took)
		}

		b = &busyServer{times: 1, status: status, header: http.Header{"Retry-After": {"1"}}}
		srv.Config.Handler = asking{b}
		start = time.Now()
		_, err = cms.Patch(context.Background(), "one", ktypes.ApplyPatchType, []byte(`{"data":{"a":"1"}}`),
			metav1.PatchOptions{FieldManager: "k8sconnect"})
		took = time.Since(start)
		if err != nil {
			t.Fatalf("a write answered %d, then the object: %v", status, err)
		}
		if seen := b.requests(); len(seen) != 2 || seen[0] != seen[1] || took < time.Second {
			t.Errorf("a write answered %d with Retry-After 1: %q in %s, want the same write twice, a second apart", status, seen, took)
		}
		srv.Close()
	}
}

// A Retry-After longer than what is left of the budget fails the request at
// once, with an error that names the server's throttling, what it asked and
// the budget, and a remedy; neither the transport nor client-go (which would
// wait as told, up to ten times, each time with a budget of its own) sends
// it again.
func TestRetryAfterPastTheBudgetFailsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		status int
		is     func(error) bool
		says   string
	}{
		{http.StatusTooManyRequests, apierrors.IsTooManyRequests, "is throttling requests (429 Too Many Requests"},
		{http.StatusServiceUnavailable, apierrors.IsServiceUnavailable, "cannot take requests for now (503 Service Unavailable)"},
	} {
		b := &busyServer{times: 1 << 30, status: tc.status, header: http.Header{"Retry-After": {"30"}}}
		srv := httptest.NewServer(asking{b})
		const budget = 5 * time.Second
		cms := dynamicVia(t, srv, budget)
		for _, write := range []bool{false, true} {
			before := len(b.requests())
			start := time.Now()
			var err error
			if write {
				_, err = cms.Update(context.Background(), &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "one", "namespace": "ns"}}},
					metav1.UpdateOptions{})
			} else {
				_, err = cms.Get(context.Background(), "one", metav1.GetOptions{})
			}
			took := time.Since(start)
			t.Logf("%d, write=%v, after %s: %v", tc.status, write, took.Round(time.Millisecond), err)
			var te *ThrottledError
			if !errors.As(err, &te) || !tc.is(err) {
				t.Fatalf("want a ThrottledError that reads as a %d, have %T %v", tc.status, err, err)
			}
			if n := len(b.requests()) - before; n != 1 || took > time.Second {
				t.Errorf("%d request(s) over %s: want one, failed at once", n, took)
			}
			for _, want := range []string{"answered " + http.StatusText(tc.status), "in 30s (Retry-After)",
				"of the request's budget of 5s (cluster_connection.request_timeout)", "not sent again"} {
				if !strings.Contains(err.Error(), want[len("answered "):]) && !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			remedy := Remedy(err)
			for _, want := range []string{tc.says, "Nothing was decided about the object",
				"give cluster_connection.request_timeout more than the 30s the server asks for"} {
				if !strings.Contains(remedy, want) {
					t.Errorf("the remedy does not say %q: %s", want, remedy)
				}
			}
			if IsNetworkFailure(err) || !Unreachable(err) {
				t.Errorf("a throttled request reads as a lost connection (%v), or as a verdict on the object (%v)",
					IsNetworkFailure(err), !Unreachable(err))
			}
		}
		srv.Close()
	}
}

// Honoured while it fits, then not: each Retry-After of 2 s is waited for
// while 2 s are left of a 3 s budget, and the request fails at once when
// they are not, having taken the budget at most.
func TestRetryAfterCountsAgainstTheBudget(t *testing.T) {
	b := &busyServer{times: 1 << 30, status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"2"}}}
	srv := httptest.NewServer(asking{b})
	defer srv.Close()
	const budget = 3 * time.Second
	start := time.Now()
	_, err := dynamicVia(t, srv, budget).Get(context.Background(), "one", metav1.GetOptions{})
	took := time.Since(start)
	var te *ThrottledError
	if !errors.As(err, &te) {
		t.Fatalf("want a ThrottledError, have %v", err)
	}
	if n := len(b.requests()); n != 2 || te.Attempts != 2 || took < 2*time.Second || took > budget {
		t.Errorf("%d request(s) (the error says %d) over %s: want 2, the second after 2s, within the budget of %s",
			n, te.Attempts, took, budget)
	}
	if !strings.Contains(err.Error(), "left of the request's budget of 3s") {
		t.Errorf("the error does not name the budget: %v", err)
	}
}

// The operation's deadline (a timeouts block) is the limit when it comes
// first, and the error says so.
func TestRetryAfterPastTheDeadline(t *testing.T) {
	b := &busyServer{times: 1 << 30, status: http.StatusServiceUnavailable, header: http.Header{"Retry-After": {"5"}}}
	srv := httptest.NewServer(asking{b})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := dynamicVia(t, srv, DefaultRequestTimeout).Get(ctx, "one", metav1.GetOptions{})
	var te *ThrottledError
	if !errors.As(err, &te) || !te.ByDeadline || !strings.Contains(err.Error(), "left before the operation's deadline") ||
		!strings.Contains(Remedy(err), "give the operation's timeouts more time") {
		t.Fatalf("want a ThrottledError that names the operation's deadline, have %v (%s)", err, Remedy(err))
	}
	if n := len(b.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
