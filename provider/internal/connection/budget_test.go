package connection

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// resetting is an API server behind a link that resets every connection it
// is told to (RST, as a firewall or a load balancer does); otherwise it
// answers a ConfigMap.
type resetting struct {
	reset atomic.Bool
	stall atomic.Bool
	seen  atomic.Int32
}

func (s *resetting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.seen.Add(1)
	switch {
	case s.reset.Load():
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0) // close with RST, not FIN
		}
		_ = conn.Close()
	case s.stall.Load():
		// Read the body, or the server would not notice the client hang up.
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one","namespace":"ns"}}`))
	}
}

// dynamicVia is a dynamic client as Cache.Client builds one: client-go's
// own retries included, the transport wrapped with budget.
func dynamicVia(t *testing.T, srv *httptest.Server, budget time.Duration) dynamic.ResourceInterface {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL, QPS: 500, Burst: 1000}
	cfg.Wrap(retryNetworkFailures(budget))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")
}

// A GET through a link that resets every connection: client-go sends a GET
// so failed again, ten times a second apart, and each of those used to start
// a budget of its own here (11 budgets and more for one read). The whole
// read, client-go's retries included, now fails within its budget.
func TestBudgetHoldsClientGoRetries(t *testing.T) {
	s := &resetting{}
	s.reset.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	const budget = 2 * time.Second
	cms := dynamicVia(t, srv, budget)

	start := time.Now()
	_, err := cms.Get(context.Background(), "one", metav1.GetOptions{})
	took := time.Since(start)
	var ne *NetworkError
	if !errors.As(err, &ne) {
		t.Fatalf("want a NetworkError, have %v", err)
	}
	t.Logf("after %s and %d request(s): %v", took.Round(time.Millisecond), s.seen.Load(), err)
	if took > budget+budget/10 {
		t.Errorf("the read took %s, past its budget of %s and 10%%", took, budget)
	}
	if ne.Attempts < 2 || int(s.seen.Load()) != ne.Attempts {
		t.Errorf("the server saw %d request(s) and the error says %d: want every attempt ours, and more than one",
			s.seen.Load(), ne.Attempts)
	}
	if !strings.Contains(err.Error(), "the connection was reset") || ne.Budget != budget {
		t.Errorf("the error does not say the connection was reset, or names no budget of %s: %v", budget, err)
	}
	if r := Remedy(err); !strings.Contains(r, "for up to 2s (cluster_connection.request_timeout)") {
		t.Errorf("the remedy does not name the budget: %q", r)
	}
}

// An attempt that gets no answer at all is cut when the budget runs out,
// not after the attempt timeout (75 s): a read and a write alike.
func TestBudgetCutsAStalledAttempt(t *testing.T) {
	s := &resetting{}
	s.stall.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	const budget = time.Second
	cms := dynamicVia(t, srv, budget)

	start := time.Now()
	_, err := cms.Get(context.Background(), "one", metav1.GetOptions{})
	took := time.Since(start)
	t.Logf("read after %s: %v", took.Round(time.Millisecond), err)
	if !IsNetworkFailure(err) || !strings.Contains(err.Error(), "no answer within 1s (the connection stalled)") {
		t.Errorf("want a network failure that says the answer stalled, have %v", err)
	}
	if took > budget+budget/10 {
		t.Errorf("the stalled read took %s, past its budget of %s and 10%%", took, budget)
	}

	// A connection that answered nothing for a whole budget gives the next
	// request one attempt, of leastAttempt at most.
	start = time.Now()
	_, err = cms.Patch(context.Background(), "one", "application/apply-patch+yaml", []byte(`{}`), metav1.PatchOptions{FieldManager: "k8sconnect"})
	took = time.Since(start)
	var ne *NetworkError
	if !errors.As(err, &ne) || !ne.Write {
		t.Fatalf("a stalled write: want a NetworkError of a write, have %v", err)
	}
	t.Logf("write after %s: %v", took.Round(time.Millisecond), err)
	if took > budget+budget/10 {
		t.Errorf("the stalled write took %s, past its budget of %s and 10%%", took, budget)
	}
}

// The clients of one connection share what they learn of it: once nothing
// has been answered for a whole budget, a request is sent once and fails at
// once, so an outage fails a plan of many objects in about one budget. The
// first answer ends it.
func TestBudgetIsSharedByTheConnection(t *testing.T) {
	s := &resetting{}
	s.reset.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	const budget = time.Second
	cms := dynamicVia(t, srv, budget)
	ctx := context.Background()

	// Ten reads at once, as terraform -parallelism=10 sends them, then ten
	// more: all fail within twice the budget, the later ones sent once.
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for wave := 0; wave < 2; wave++ {
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := cms.Get(ctx, "one", metav1.GetOptions{})
				errs <- err
			}()
		}
		wg.Wait()
	}
	close(errs)
	took := time.Since(start)
	for err := range errs {
		if !IsNetworkFailure(err) {
			t.Fatalf("want a network failure, have %v", err)
		}
	}
	if took > 2*budget {
		t.Errorf("two waves of ten reads took %s, more than twice the budget of %s", took, budget)
	}

	t.Logf("two waves of ten reads failed in %s", took.Round(time.Millisecond))

	// Once the budget has passed since the first failure, and moments after
	// the last, a read is not sent at all: it fails at once, saying why.
	time.Sleep(time.Until(start.Add(budget + 100*time.Millisecond)))
	before := s.seen.Load()
	_, err := cms.Get(ctx, "one", metav1.GetOptions{})
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Attempts != 0 || s.seen.Load() != before {
		t.Fatalf("a read on a connection silent for a budget, its last failure moments ago: want it not sent, "+
			"have %v after %d request(s)", err, s.seen.Load()-before)
	}
	if !strings.Contains(err.Error(), "no answer from the API server on this connection for") ||
		!strings.Contains(err.Error(), "was not sent; the last request sent, moments ago, failed: ") {
		// (The last failure is the reset, or, on a machine so busy that
		// an attempt began at its budget's end, that attempt's cut.)
		t.Errorf("the error does not say why the read was not sent: %v", err)
	}

	// Once the last failure is leastAttempt past, one read is sent as a
	// probe, and fails once.
	time.Sleep(leastAttempt)
	before = s.seen.Load()
	_, err = cms.Get(ctx, "one", metav1.GetOptions{})
	if !errors.As(err, &ne) || ne.Attempts != 1 || s.seen.Load() != before+1 || ne.Silent < budget {
		t.Fatalf("a probe: want one attempt and an error that says the connection was silent, have %v after %d request(s)",
			err, s.seen.Load()-before)
	}
	if !strings.Contains(err.Error(), "had answered nothing on this connection for") {
		t.Errorf("the error does not say the connection was silent: %v", err)
	}

	// The server answers the next probe, and from then on a read has its
	// own budget again.
	s.reset.Store(false)
	time.Sleep(leastAttempt)
	if _, err := cms.Get(ctx, "one", metav1.GetOptions{}); err != nil {
		t.Fatalf("the server answers again, the read does not: %v", err)
	}
	s.reset.Store(true)
	before = s.seen.Load()
	if _, err := cms.Get(ctx, "one", metav1.GetOptions{}); !errors.As(err, &ne) || ne.Attempts < 2 || ne.Silent != 0 {
		t.Fatalf("after an answer a read has its own budget again: want several attempts, have %v after %d request(s)",
			err, s.seen.Load()-before)
	}
}

func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		value types.String
		want  time.Duration
		err   string
	}{
		{types.StringNull(), DefaultRequestTimeout, ""},
		{types.StringValue("5s"), 5 * time.Second, ""},
		{types.StringValue("2m"), 2 * time.Minute, ""},
		{types.StringValue("5"), 0, `cluster_connection.request_timeout "5" is not a positive duration`},
		{types.StringValue("0s"), 0, `cluster_connection.request_timeout "0s" is not a positive duration`},
		{types.StringValue("-1s"), 0, `"-1s" is not a positive duration`},
		{types.StringValue(""), 0, `"" is not a positive duration`},
	} {
		got, err := Model{RequestTimeout: tc.value}.Budget()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: want an error with %q, have %v", tc.value, tc.err, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.value, got, err, tc.want)
		}
	}
}
