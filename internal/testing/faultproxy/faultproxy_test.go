package faultproxy_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// upstream is a TLS server standing in for the API server; it counts the
// requests that reach it.
type upstream struct {
	*httptest.Server
	caPEM []byte
	mu    sync.Mutex
	seen  []string // "METHOD path?query"
	hits  atomic.Int32
}

func newUpstream(t *testing.T, handler http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Method+" "+r.URL.RequestURI())
		u.mu.Unlock()
		u.hits.Add(1)
		if handler != nil {
			handler(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, r.Method+" "+r.Header.Get("Authorization")+" "+string(body))
	}))
	t.Cleanup(u.Close)
	u.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.Certificate().Raw})
	return u
}

func client(t *testing.T, p *faultproxy.Proxy) *http.Client {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.CAPEM) {
		t.Fatal("no certificate in the proxy's CA PEM")
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		ForceAttemptHTTP2: true, // the proxy must still answer in HTTP/1.1
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func do(c *http.Client, p *faultproxy.Proxy, method, uri, body string) (string, *http.Response, error) {
	req, err := http.NewRequest(method, p.URL+uri, strings.NewReader(body))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp, err
}

const cmPath = "/api/v1/namespaces/ns/configmaps/cm"

func TestForwardsWithAuthorizationOverHTTP11(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	body, resp, err := do(client(t, p), p, http.MethodPatch, cmPath+"?fieldManager=x", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if want := "PATCH Bearer secret hello"; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	if resp.ProtoMajor != 1 {
		t.Errorf("protocol %s, want HTTP/1.1", resp.Proto)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Action != "forward" || reqs[0].Status != 200 || reqs[0].Query != "fieldManager=x" {
		t.Errorf("requests %v", reqs)
	}
}

func TestRefusesNonLoopbackUpstream(t *testing.T) {
	u := newUpstream(t, nil)
	if _, err := faultproxy.Start("https://example.com:6443", u.caPEM); err == nil {
		t.Fatal("started in front of a non-loopback server")
	}
}

func TestDropNeverReachesTheServer(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", "cm"), Action: faultproxy.Drop})
	c := client(t, p)
	for range 3 {
		if _, _, err := do(c, p, http.MethodPatch, cmPath+"?fieldManager=x", "{}"); err == nil {
			t.Fatal("a dropped request got an answer")
		}
	}
	// Dry runs and other methods pass.
	if _, _, err := do(c, p, http.MethodPatch, cmPath+"?dryRun=All&fieldManager=x", "{}"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
		t.Fatal(err)
	}
	if f.Hits() != 3 || u.hits.Load() != 2 {
		t.Errorf("hits %d (want 3), upstream saw %d (want 2): %v", f.Hits(), u.hits.Load(), u.seen)
	}
	f.Remove()
	if _, _, err := do(c, p, http.MethodPatch, cmPath, "{}"); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
}

// A reset is a TCP RST, as a firewall or a load balancer sends one: the
// client reads ECONNRESET, not an orderly close, and the server sees nothing.
func TestResetResetsTheConnection(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Action: faultproxy.Reset})
	c := client(t, p)
	for range 3 {
		_, _, err := do(c, p, http.MethodGet, cmPath, "")
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("want ECONNRESET, have %v", err)
		}
	}
	if f.Hits() < 3 || u.hits.Load() != 0 {
		t.Errorf("hits %d (want 3 or more), upstream saw %d (want 0): %v", f.Hits(), u.hits.Load(), u.seen)
	}
	f.Remove()
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
}

func TestCutReachesTheServerButNotTheClient(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", "cm"), Action: faultproxy.Cut})
	c := client(t, p)
	for range 2 {
		if _, _, err := do(c, p, http.MethodPatch, cmPath, "{}"); err == nil {
			t.Fatal("a cut request got an answer")
		}
	}
	if f.Hits() != 2 || u.hits.Load() != 2 {
		t.Errorf("hits %d, upstream saw %d; want 2 and 2", f.Hits(), u.hits.Load())
	}
	if reqs := p.Requests(); reqs[0].Action != "cut" || reqs[0].Status != 200 {
		t.Errorf("requests %v", reqs)
	}
}

func TestAfterAndTimes(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "PATCH"}, Action: faultproxy.Drop, After: 1, Times: 2})
	c := client(t, p)
	var got []bool
	for range 5 {
		_, _, err := do(c, p, http.MethodPatch, cmPath, "{}")
		got = append(got, err == nil)
	}
	if want := []bool{true, false, false, true, true}; !equal(got, want) {
		t.Errorf("answered %v, want %v", got, want)
	}
	if f.Hits() != 2 || f.Seen() != 3 {
		t.Errorf("hits %d seen %d, want 2 and 3", f.Hits(), f.Seen())
	}
}

func TestBodyAndQueryMatch(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	m := faultproxy.ApplyOf("configmaps", "cm")
	m.NoBody = "create-pending"
	m.Query = []string{"fieldManager=k8sconnect"}
	p.Inject(faultproxy.Rule{Match: m, Action: faultproxy.Drop})
	c := client(t, p)
	cases := []struct {
		uri, body string
		answered  bool
	}{
		{cmPath + "?fieldManager=k8sconnect", `{"metadata":{"annotations":{"k8sconnect.io/create-pending":"x"}}}`, true},
		{cmPath + "?fieldManager=k8sconnect", `{"metadata":{}}`, false},
		{cmPath + "?fieldManager=other", `{"metadata":{}}`, true},
		{cmPath + "?fieldManager=k8sconnect&dryRun=All", `{"metadata":{}}`, true},
		{cmPath + "x?fieldManager=k8sconnect", `{"metadata":{}}`, false}, // Path is a substring
	}
	for _, tc := range cases {
		_, _, err := do(c, p, http.MethodPatch, tc.uri, tc.body)
		if (err == nil) != tc.answered {
			t.Errorf("%s %s: answered %v, want %v (%v)", tc.uri, tc.body, err == nil, tc.answered, err)
		}
	}
}

func TestDelay(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	p.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET"}, Action: faultproxy.Delay, Delay: 300 * time.Millisecond, Times: 1})
	c := client(t, p)
	begin := time.Now()
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 300*time.Millisecond {
		t.Errorf("answered after %s, want at least 300ms", d)
	}
	begin = time.Now()
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 250*time.Millisecond {
		t.Errorf("second request delayed %s: the rule was for one request", d)
	}
}

func TestPauseHoldsTheResponseUntilReleased(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", "cm"), Action: faultproxy.Pause, Times: 1})
	c := client(t, p)
	type result struct {
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		body, _, err := do(c, p, http.MethodPatch, cmPath, "first")
		done <- result{body, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if u.hits.Load() != 1 {
		t.Fatalf("upstream saw %d requests while the response is held, want 1", u.hits.Load())
	}
	select {
	case r := <-done:
		t.Fatalf("the client got %q, %v while the response is held", r.body, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	// Other requests are not held meanwhile.
	if _, _, err := do(c, p, http.MethodPatch, cmPath, "second"); err != nil {
		t.Fatal(err)
	}
	f.Release()
	r := <-done
	if r.err != nil || r.body != "PATCH Bearer secret first" {
		t.Fatalf("after Release: %q, %v", r.body, r.err)
	}
	if f.Held() != 0 {
		t.Errorf("still holding %d", f.Held())
	}
}

func TestCloseReleasesAndStops(t *testing.T) {
	u := newUpstream(t, nil)
	p, err := faultproxy.Start(u.URL, u.caPEM)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Inject(faultproxy.Rule{Match: faultproxy.Match{}, Action: faultproxy.Pause})
	c := client(t, p)
	done := make(chan error, 1)
	go func() { _, _, err := do(c, p, http.MethodGet, cmPath, ""); done <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	select {
	case err := <-done:
		t.Logf("the held request ended with %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the held request is still open after Close")
	}
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err == nil {
		t.Fatal("the proxy answers after Close")
	}
	if err := f.WaitHits(ctx, 5); err == nil {
		t.Fatal("WaitHits returned nil on a closed proxy")
	}
}

func TestWatchesPassThroughUntouched(t *testing.T) {
	release := make(chan struct{})
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
		w.(http.Flusher).Flush()
		<-release // the stream stays open
	})
	defer close(release)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.Match{}, Action: faultproxy.Drop}) // drops everything else
	c := client(t, p)
	resp, err := c.Get(p.URL + "/api/v1/namespaces/ns/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != `{"type":"ADDED"}`+"\n" {
		t.Fatalf("first event %q, %v", line, err)
	}
	if f.Hits() != 0 {
		t.Errorf("the rule acted on a watch")
	}
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err == nil {
		t.Error("a plain request passed a drop-everything rule")
	}
}

func TestKillTreeKillsEveryDescendant(t *testing.T) {
	// A parent, a child in the parent's group and a grandchild in a group of
	// its own (as Pulumi starts its plugins).
	cmd := exec.Command("sh", "-c", `sleep 300 & setsid sleep 300 & wait`)
	faultproxy.OwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Both children running sleep: the second is setsid until it execs.
	var children []int
	sleeping := func() bool {
		for _, c := range children {
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); err != nil || strings.TrimSpace(string(comm)) != "sleep" {
				return false
			}
		}
		return len(children) == 2
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sleeping() && time.Now().Before(deadline) {
		children = childrenOf(cmd.Process.Pid)
		time.Sleep(20 * time.Millisecond)
	}
	if !sleeping() {
		t.Fatalf("children %v, not both running sleep", children)
	}
	killed, err := faultproxy.KillTree(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, p := range killed {
		commands = append(commands, p.Command)
	}
	sort.Strings(commands)
	if strings.Join(commands, " ") != "sh sleep sleep" {
		t.Errorf("killed %v, want sh and two sleeps", killed)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.String() != "signal: killed" {
		t.Errorf("the parent ended with %v, want signal: killed", err)
	}
	for _, c := range children {
		deadline := time.Now().Add(5 * time.Second)
		for alive(c) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(c) {
			t.Errorf("child %d is still alive", c)
		}
	}
}

func childrenOf(pid int) []int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Chaos cuts requests at random moments, some of them after the server has
// taken them, and stops when told.
func TestChaosCutsConnectionsAtRandomMoments(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		_, _ = io.WriteString(w, "ok")
	})
	p := faultproxy.New(t, u.URL, u.caPEM)
	chaos := p.Chaos(faultproxy.ChaosOptions{Seed: 1, MeanInterval: 100 * time.Millisecond})
	c := client(t, p)
	var failed, answered int
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
			failed++
		} else {
			answered++
		}
	}
	chaos.Stop()
	if chaos.Cuts() == 0 || chaos.Interrupted() == 0 || failed == 0 || answered == 0 {
		t.Fatalf("%s; %d request(s) failed, %d answered: want some of each", chaos, failed, answered)
	}
	cuts := chaos.Cuts()
	for range 5 {
		if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err != nil {
			t.Fatalf("after Stop: %v", err)
		}
	}
	if chaos.Cuts() != cuts {
		t.Fatal("connections were cut after Stop")
	}
}

func TestAnswerSpeaksForTheServer(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	busy := p.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", "cm"), Action: faultproxy.Answer,
		Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"2"}}, Times: 1})
	gone := p.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: "GET", WholePath: "/api"}, Action: faultproxy.Answer,
		Status: http.StatusNotFound, Body: []byte("no such thing")})
	c := client(t, p)

	body, resp, err := do(c, p, http.MethodPatch, cmPath+"?fieldManager=x", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("answer %d, Retry-After %q, Content-Type %q", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`"kind":"Status"`, `"code":429`, `"reason":"TooManyRequests"`, `"retryAfterSeconds":2`, "PATCH " + cmPath} {
		if !strings.Contains(body, want) {
			t.Errorf("status body %s lacks %s", body, want)
		}
	}
	if u.hits.Load() != 0 {
		t.Errorf("an answered request reached the server: %v", u.seen)
	}
	// Exhausted after one time: the next one reaches the server.
	if _, resp, err := do(c, p, http.MethodPatch, cmPath+"?fieldManager=x", "{}"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second send: %v %v", resp, err)
	}
	// WholePath: "/api" exactly, not every path it begins.
	if body, resp, err := do(c, p, http.MethodGet, "/api", ""); err != nil || resp.StatusCode != 404 || body != "no such thing" {
		t.Errorf("GET /api: %q %v %v", body, resp, err)
	}
	if _, resp, err := do(c, p, http.MethodGet, cmPath, ""); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET %s: %v %v", cmPath, resp, err)
	}
	if busy.Hits() != 1 || gone.Hits() != 1 {
		t.Errorf("hits %d and %d, want 1 and 1", busy.Hits(), gone.Hits())
	}
	reqs := p.Requests()
	if reqs[0].Action != "answer" || reqs[0].Status != 429 {
		t.Errorf("requests %v", reqs)
	}
}

func TestTruncateBreaksTheAnswerOffHalfway(t *testing.T) {
	const answer = "0123456789abcdefghij"
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, answer) })
	p := faultproxy.New(t, u.URL, u.caPEM)
	p.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", "cm"), Action: faultproxy.Truncate, Times: 1})
	c := client(t, p)
	body, resp, err := do(c, p, http.MethodPatch, cmPath, "{}")
	if !errors.Is(err, io.ErrUnexpectedEOF) || resp.StatusCode != 200 || body != answer[:len(answer)/2] {
		t.Fatalf("truncated answer: %q, %v, %v; want the first half and an unexpected EOF", body, resp, err)
	}
	if u.hits.Load() != 1 {
		t.Errorf("upstream saw %d requests, want 1: the truncated request took effect", u.hits.Load())
	}
	if body, _, err := do(c, p, http.MethodPatch, cmPath, "{}"); err != nil || body != answer {
		t.Errorf("second send: %q %v", body, err)
	}
}

func TestEndWatchEndsTheStreamCleanly(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
		if r.URL.Query().Get("watch") == "true" {
			w.(http.Flusher).Flush()
			<-r.Context().Done() // the server would keep it open
		}
	})
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.Match{Path: "/configmaps"}, Action: faultproxy.EndWatch, Delay: 300 * time.Millisecond})
	c := client(t, p)
	begin := time.Now()
	resp, err := c.Get(p.URL + "/api/v1/namespaces/ns/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil || string(all) != `{"type":"ADDED"}`+"\n" {
		t.Fatalf("stream %q, %v; want the first event and a clean end", all, err)
	}
	if took := time.Since(begin); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the watch ended after %s, want about 300ms", took)
	}
	// A plain request on the same path is not a watch: the rule passes it.
	if _, resp, err := do(c, p, http.MethodGet, "/api/v1/namespaces/ns/configmaps", ""); err != nil || resp.StatusCode != 200 {
		t.Errorf("list: %v %v", resp, err)
	}
	if f.Hits() != 1 {
		t.Errorf("hits %d, want 1", f.Hits())
	}
}

// A stall reads the request and never answers: the client waits until it
// gives up, the server never sees the request, and the connection is closed
// once the client has gone.
func TestStallNeverAnswers(t *testing.T) {
	u := newUpstream(t, nil)
	p := faultproxy.New(t, u.URL, u.caPEM)
	f := p.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: http.MethodGet}, Action: faultproxy.Stall})
	c := client(t, p)
	c.Timeout = 700 * time.Millisecond
	begin := time.Now()
	_, _, err := do(c, p, http.MethodGet, cmPath, "")
	var timeout interface{ Timeout() bool }
	if !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Fatalf("want the client's timeout, have %v", err)
	}
	if took := time.Since(begin); took < 700*time.Millisecond {
		t.Errorf("the stalled request ended after %s, before the client's timeout", took)
	}
	if f.Hits() != 1 || u.hits.Load() != 0 {
		t.Errorf("hits %d (want 1), upstream saw %d (want 0)", f.Hits(), u.hits.Load())
	}
	// MaxHold: the proxy closes a connection it has held that long.
	f.Remove()
	p.Inject(faultproxy.Rule{Action: faultproxy.Stall, MaxHold: 300 * time.Millisecond})
	c.Timeout = 10 * time.Second
	begin = time.Now()
	if _, _, err := do(c, p, http.MethodGet, cmPath, ""); err == nil || time.Since(begin) > 5*time.Second {
		t.Errorf("a stall held past MaxHold: %v after %s", err, time.Since(begin))
	}
}

// The API server's own NotFound names the object it did not find; so does
// the proxy's answer in its place, and a 404 of a path that names no object
// names none.
func TestNotFoundNamesTheObject(t *testing.T) {
	for _, tc := range []struct{ path, want, not string }{
		{cmPath, `"details":{"kind":"configmaps","name":"cm"}`, `"group"`},
		{"/apis/apps/v1/namespaces/ns/deployments/web/status", `"details":{"group":"apps","kind":"deployments","name":"web"}`, ""},
		{"/api/v1/namespaces/ns", `"details":{"kind":"namespaces","name":"ns"}`, ""},
		{"/api/v1/namespaces/ns/configmaps", `"code":404`, `"details"`},
		{"/api", `"code":404`, `"details"`},
	} {
		body := string(faultproxy.StatusBody(http.StatusNotFound, http.MethodGet, tc.path, 0))
		if !strings.Contains(body, tc.want) || (tc.not != "" && strings.Contains(body, tc.not)) {
			t.Errorf("%s: %s (want %s, not %q)", tc.path, body, tc.want, tc.not)
		}
	}
}
