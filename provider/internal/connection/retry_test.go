package connection

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
)

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestNetworkFailureClassifier(t *testing.T) {
	opErr := func(err error) error {
		return &url.Error{Op: "Patch", URL: "https://127.0.0.1:6443/api/v1/namespaces/a/configmaps/b",
			Err: &net.OpError{Op: "read", Net: "tcp", Err: err}}
	}
	cms := schema.GroupResource{Resource: "configmaps"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection reset", opErr(os.NewSyscallError("read", syscall.ECONNRESET)), true},
		{"EOF", &url.Error{Op: "Get", URL: "https://x/api", Err: io.EOF}, true},
		{"unexpected EOF", fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), true},
		{"broken pipe", opErr(os.NewSyscallError("write", syscall.EPIPE)), true},
		{"refused", opErr(os.NewSyscallError("connect", syscall.ECONNREFUSED)), true},
		{"GOAWAY", errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=3, ErrCode=NO_ERROR, debug=""`), true},
		{"idle connection closed as the request went out", &url.Error{Op: "Patch", URL: "https://x/api", Err: errors.New("http: server closed idle connection")}, true},
		{"HTTP/2 connection lost", errors.New("http2: client connection lost"), true},
		{"i/o timeout", opErr(timeoutError{}), true},
		{"500", apierrors.NewInternalError(errors.New("etcd is sad")), false},
		{"403", apierrors.NewForbidden(cms, "b", errors.New("no")), false},
		{"500 quoting a webhook's reset", apierrors.NewInternalError(errors.New(`failed calling webhook "v.example.com": read tcp: connection reset by peer`)), false},
		{"504 timeout answer", apierrors.NewTimeoutError("slow", 1), false},
		{"context deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), false},
		{"context canceled", &url.Error{Op: "Get", URL: "https://x/api", Err: context.Canceled}, false},
		{"unknown CA", &url.Error{Op: "Get", URL: "https://x/api", Err: x509.UnknownAuthorityError{}}, false},
		{"unknown host", &url.Error{Op: "Get", URL: "https://x/api", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, false},
		{"nil", nil, false},
	} {
		if got := networkFailure(c.err); got != c.want {
			t.Errorf("%s (%v): networkFailure = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// flaky answers after hanging up on the first `cuts` requests; it records
// every request body it saw.
type flaky struct {
	mu      sync.Mutex
	cuts    int
	halfway bool // cut after the headers and part of the body
	status  int
	seen    []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.seen = append(f.seen, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	cut := len(f.seen) <= f.cuts
	f.mu.Unlock()
	if cut && f.halfway {
		// Headers and part of the body, then the connection goes.
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"kind":`))
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	if cut {
		conn, _, _ := http.NewResponseController(w).Hijack()
		_ = conn.Close()
		return
	}
	w.WriteHeader(f.status)
	_, _ = w.Write([]byte(`{"kind":"ConfigMap"}`))
}

func (f *flaky) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func client(srv *httptest.Server) *http.Client {
	base := srv.Client().Transport.(*http.Transport).Clone()
	base.DisableKeepAlives = true
	rt := &retryingTransport{next: base, sleep: func(context.Context, time.Duration) error { return nil }, limit: attemptTimeout,
		budget: DefaultRequestTimeout, link: &link{}}
	return &http.Client{Transport: rt}
}

func do(t *testing.T, c *http.Client, ctx context.Context, method, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

func TestRetryingTransport(t *testing.T) {
	ctx := context.Background()
	path := "/api/v1/namespaces/ns/configmaps/one"

	t.Run("a read is sent again until it is answered", func(t *testing.T) {
		f := &flaky{cuts: 3, status: http.StatusOK}
		srv := httptest.NewServer(f)
		defer srv.Close()
		resp, err := do(t, client(srv), ctx, http.MethodGet, srv.URL+path, "")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if n := len(f.requests()); n != 4 {
			t.Fatalf("the server saw %d requests, want 4 (3 cut, 1 answered)", n)
		}
	})

	t.Run("an answer cut halfway through its body is asked for again", func(t *testing.T) {
		f := &flaky{cuts: 2, halfway: true, status: http.StatusOK}
		srv := httptest.NewServer(f)
		defer srv.Close()
		resp, err := do(t, client(srv), ctx, http.MethodGet, srv.URL+path, "")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || string(body) != `{"kind":"ConfigMap"}` || len(f.requests()) != 3 {
			t.Fatalf("body %q (%v) after %d requests; want the whole answer after 3", body, err, len(f.requests()))
		}
	})

	t.Run("a dry run is sent again with the same body", func(t *testing.T) {
		f := &flaky{cuts: 2, status: http.StatusOK}
		srv := httptest.NewServer(f)
		defer srv.Close()
		resp, err := do(t, client(srv), ctx, http.MethodPatch, srv.URL+path+"?dryRun=All&fieldManager=k8sconnect", `{"data":{"a":"1"}}`)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		seen := f.requests()
		if len(seen) != 3 {
			t.Fatalf("the server saw %d requests, want 3", len(seen))
		}
		for _, s := range seen {
			if !strings.HasSuffix(s, `{"data":{"a":"1"}}`) {
				t.Fatalf("a resent dry run lost its body: %q", s)
			}
		}
	})

	t.Run("a write is sent once and its error names it as a network failure", func(t *testing.T) {
		f := &flaky{cuts: 1, status: http.StatusOK}
		srv := httptest.NewServer(f)
		defer srv.Close()
		_, err := do(t, client(srv), ctx, http.MethodPatch, srv.URL+path+"?fieldManager=k8sconnect&force=true", `{}`)
		var ne *NetworkError
		if !errors.As(err, &ne) || !ne.Write || ne.Attempts != 1 {
			t.Fatalf("want a NetworkError sent once, have %#v", err)
		}
		if n := len(f.requests()); n != 1 {
			t.Fatalf("a write was sent %d times", n)
		}
		t.Logf("the error: %v", err)
		for _, want := range []string{"network failure", "PATCH " + path, "outcome is unknown"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error %q does not say %q", err, want)
			}
		}
		if strings.Contains(err.Error(), "rejected") {
			t.Errorf("a network failure is called a rejection: %q", err)
		}
		if r := Remedy(err); !strings.Contains(r, "network failed") {
			t.Errorf("the remedy does not say it was the network: %q", r)
		}
	})

	for _, status := range []int{http.StatusInternalServerError, http.StatusForbidden, http.StatusConflict} {
		t.Run(fmt.Sprintf("an answer of %d is returned as it is", status), func(t *testing.T) {
			f := &flaky{status: status}
			srv := httptest.NewServer(f)
			defer srv.Close()
			resp, err := do(t, client(srv), ctx, http.MethodGet, srv.URL+path, "")
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != status || len(f.requests()) != 1 {
				t.Fatalf("status %d after %d request(s), want %d after 1", resp.StatusCode, len(f.requests()), status)
			}
		})
	}

	t.Run("retries stop at the request's deadline", func(t *testing.T) {
		f := &flaky{cuts: 1 << 30, status: http.StatusOK}
		srv := httptest.NewServer(f)
		defer srv.Close()
		base := srv.Client().Transport.(*http.Transport).Clone()
		c := &http.Client{Transport: retryNetworkFailures(DefaultRequestTimeout)(base)}
		dctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := do(t, c, dctx, http.MethodGet, srv.URL+path, "")
		if took := time.Since(start); took > 800*time.Millisecond {
			t.Fatalf("retries went on for %s, past the 700ms deadline", took)
		}
		var ne *NetworkError
		if !errors.As(err, &ne) || ne.Write || ne.Attempts < 2 {
			t.Fatalf("want a NetworkError after several attempts, have %v", err)
		}
		t.Logf("the error: %v", err)
	})
	t.Run("a stalled answer is given up after the attempt timeout", func(t *testing.T) {
		t.Setenv(durations.AttemptTimeoutEnv, "300ms")
		// The first request of each kind gets no answer at all until its
		// client goes away, as behind a proxy that stopped forwarding.
		var mu sync.Mutex
		seen := map[string]int{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[r.Method]++
			first := seen[r.Method] == 1
			mu.Unlock()
			if first {
				// Read the body, or the server would not notice the client
				// hang up; and never hold the test's end for long.
				_, _ = io.ReadAll(r.Body)
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
				return
			}
			_, _ = w.Write([]byte(`{"kind":"ConfigMap"}`))
		}))
		defer srv.Close()
		c := &http.Client{Transport: retryNetworkFailures(DefaultRequestTimeout)(srv.Client().Transport.(*http.Transport).Clone())}

		start := time.Now()
		resp, err := do(t, c, ctx, http.MethodGet, srv.URL+path, "")
		if err != nil {
			t.Fatalf("a read whose first attempt stalled: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(body) != `{"kind":"ConfigMap"}` || seen[http.MethodGet] != 2 {
			t.Fatalf("read %q after %d request(s), want the object after 2", body, seen[http.MethodGet])
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("the read took %s", took)
		}

		_, err = do(t, c, ctx, http.MethodPatch, srv.URL+path+"?fieldManager=k8sconnect", `{}`)
		var ne *NetworkError
		if !errors.As(err, &ne) || !ne.Write || seen[http.MethodPatch] != 1 {
			t.Fatalf("a stalled write: want a NetworkError of a write sent once, have %v after %d", err, seen[http.MethodPatch])
		}
		t.Logf("the error: %v", err)
		if !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("the error does not say the answer stalled: %q", err)
		}

		// The caller's own deadline, shorter than the attempt's, stays the
		// caller's: no network failure, no retry.
		mu.Lock()
		seen = map[string]int{}
		mu.Unlock()
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = do(t, c, dctx, http.MethodGet, srv.URL+path, "")
		if !errors.Is(err, context.DeadlineExceeded) || IsNetworkFailure(err) {
			t.Fatalf("the caller's deadline: want context.DeadlineExceeded and no network failure, have %v", err)
		}
	})
}

// busyServer answers its first `times` requests with status and header, then
// 200; it records every request with its body.
type busyServer struct {
	mu     sync.Mutex
	times  int
	status int
	header http.Header
	seen   []string
}

func (b *busyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.seen = append(b.seen, r.Method+" "+string(body))
	busy := len(b.seen) <= b.times
	b.mu.Unlock()
	if busy {
		for k, v := range b.header {
			w.Header()[k] = v
		}
		w.WriteHeader(b.status)
		_, _ = w.Write([]byte(`{"kind":"Status","status":"Failure"}`))
		return
	}
	_, _ = w.Write([]byte(`{"kind":"ConfigMap"}`))
}

func (b *busyServer) requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.seen...)
}

func TestBusyAnswers(t *testing.T) {
	ctx := context.Background()
	path := "/api/v1/namespaces/ns/configmaps/one"
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
			t.Run(fmt.Sprintf("%s answered %d without Retry-After is sent again", method, status), func(t *testing.T) {
				b := &busyServer{times: 2, status: status}
				srv := httptest.NewServer(b)
				defer srv.Close()
				body := ""
				if method == http.MethodPatch {
					body = `{"data":{"a":"1"}}` // a write: the server did not act on it
				}
				resp, err := do(t, client(srv), ctx, method, srv.URL+path+"?fieldManager=k8sconnect", body)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				seen := b.requests()
				if resp.StatusCode != http.StatusOK || string(got) != `{"kind":"ConfigMap"}` || len(seen) != 3 {
					t.Fatalf("status %d, body %q after %d requests; want the object after 3", resp.StatusCode, got, len(seen))
				}
				for _, s := range seen {
					if s != method+" "+body {
						t.Fatalf("a request sent again is not the same request: %q, want %q", s, method+" "+body)
					}
				}
			})
		}
	}

	t.Run("a server that stays busy: its own answer when the time is up", func(t *testing.T) {
		b := &busyServer{times: 1 << 30, status: http.StatusServiceUnavailable}
		srv := httptest.NewServer(b)
		defer srv.Close()
		c := &http.Client{Transport: retryNetworkFailures(DefaultRequestTimeout)(srv.Client().Transport.(*http.Transport).Clone())}
		dctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
		defer cancel()
		resp, err := do(t, c, dctx, http.MethodGet, srv.URL+path, "")
		if err != nil {
			t.Fatalf("want the server's answer, have %v", err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(got), `"Failure"`) || len(b.requests()) < 2 {
			t.Fatalf("status %d, body %q after %d request(s); want the 503 and its body after several", resp.StatusCode, got, len(b.requests()))
		}
	})

	t.Run("a write answered busy, then lost, is a write whose outcome is unknown", func(t *testing.T) {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			conn, _, _ := http.NewResponseController(w).Hijack()
			_ = conn.Close()
		}))
		defer srv.Close()
		_, err := do(t, client(srv), ctx, http.MethodPatch, srv.URL+path+"?fieldManager=k8sconnect", `{}`)
		var ne *NetworkError
		if !errors.As(err, &ne) || !ne.Write || ne.Attempts != 2 || n != 2 {
			t.Fatalf("want a NetworkError of a write after 2 attempts, have %v after %d request(s)", err, n)
		}
		if !strings.Contains(err.Error(), "sent 2 times") || !strings.Contains(err.Error(), "outcome is unknown") {
			t.Errorf("the error does not say the write was sent twice, the last with an unknown outcome: %q", err)
		}
	})
}
