// Package faultproxy is a loopback HTTPS reverse proxy in front of a real
// kube-apiserver that tests tell to misbehave: drop a request before it reaches
// the server, forward it and then cut the connection instead of answering,
// reset the connection instead (a TCP RST), stall it (read the request and
// never answer, as a half-dead load balancer does), delay it, hold the server's
// answer until the test releases it (so that
// the test can kill the client while its request has landed but its response
// has not), answer in the server's place with a status of the test's choosing,
// cut an answer halfway through its body, or end a watch early.
//
// The proxy terminates TLS with a certificate for 127.0.0.1 signed by a CA of
// its own (Proxy.CAPEM), so a client connects with
//
//	cluster_connection = { host = proxy.URL, cluster_ca_certificate = proxy.CAPEM, token = <the cluster's token> }
//
// The Authorization header passes through; the proxy verifies the upstream
// server with the cluster's CA. It serves HTTP/1.1 only (a connection is cut by
// closing it), listens on 127.0.0.1 only, forwards only to a loopback server,
// buffers at most MaxBody bytes of a request and MaxResponse bytes of a
// faulted response, holds a paused response at most Rule.MaxHold, and stops
// everything it started on Close.
//
// Proxy.Chaos simulates a flaky link instead: it closes every open connection
// at random, seeded moments.
//
// Rules (Proxy.Inject) are tried in the order they were added; the first that
// matches a request acts on it. A rule acts on every matching request
// (persistent) or on the first Times of them, optionally after letting the
// first After through. Streaming requests (watches, log follows, upgrades)
// pass through untouched, except that an EndWatch rule ends a watch it matches.
package faultproxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
)

// Limits.
const (
	// MaxBody is how much of a request body the proxy reads to match rules;
	// a longer body matches no rule that looks at bodies.
	MaxBody = 1 << 20
	// MaxResponse is the largest response a Cut or Pause rule buffers; a larger
	// one fails the request as if it were cut.
	MaxResponse = 16 << 20
	// DefaultMaxHold is how long a paused response is held when the rule does
	// not say.
	DefaultMaxHold = 10 * time.Minute
	// logSize is how many requests Requests remembers.
	logSize = 1000
	// upstreamTimeout bounds the upstream round trip of a faulted request,
	// which runs to completion even if the client goes away.
	upstreamTimeout = 2 * time.Minute
)

// Action is what a rule does with a request it matches.
type Action int

const (
	// Drop closes the client's connection before forwarding: the server never
	// sees the request.
	Drop Action = iota + 1
	// Cut forwards the request, reads the server's whole response and closes
	// the client's connection without answering: the request took effect, the
	// client cannot know.
	Cut
	// Delay waits Rule.Delay, then forwards the request normally.
	Delay
	// Pause forwards the request, reads the server's whole response and holds
	// it until Fault.Release (or Fault.Remove, Proxy.Close, Rule.MaxHold), then
	// answers, if the client is still there.
	Pause
	// Answer answers in the server's place with Rule.Status, Rule.Header and
	// Rule.Body (by default a metav1.Status naming the code, as the API server
	// writes one): the server never sees the request.
	Answer
	// Truncate forwards the request, reads the server's whole response, sends
	// its headers (with the full Content-Length) and the first half of its
	// body, then closes the connection: the request took effect, and the
	// client sees an answer that breaks off.
	Truncate
	// EndWatch forwards a watch and closes it after Rule.Delay (at once when
	// zero), as an API server, a load balancer or an idle timeout does: the
	// client sees the stream end without an error event. It matches watches
	// only; a plain request passes.
	EndWatch
	// Reset resets the client's connection (a TCP RST, as a firewall or a
	// load balancer sends) before forwarding: the server never sees the
	// request, and the client reads "connection reset by peer".
	Reset
	// Stall reads the request and never answers: the connection stays open
	// and silent (a load balancer or proxy gone half dead, a VPN that stops
	// forwarding) until the client gives up, the proxy closes or Rule.MaxHold
	// passes, and is then closed. The server never sees the request.
	Stall
)

func (a Action) String() string {
	switch a {
	case Drop:
		return "drop"
	case Cut:
		return "cut"
	case Delay:
		return "delay"
	case Pause:
		return "pause"
	case Answer:
		return "answer"
	case Truncate:
		return "truncate"
	case EndWatch:
		return "end-watch"
	case Reset:
		return "reset"
	case Stall:
		return "stall"
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Match selects requests. Every non-empty field must hold.
type Match struct {
	Method string // e.g. "PATCH"
	Path   string // a substring of the URL path, e.g. "/configmaps/my-name"
	// WholePath is the URL path exactly, for a path that is a prefix of
	// many others (discovery's "/api", "/apis").
	WholePath string
	Query     []string // query parameters that must be present: "name" or "name=value"
	NoQuery   []string // query parameters that must be absent: "name" or "name=value"
	Body      string   // a substring of the request body
	NoBody    string   // a substring the request body must not contain
}

// ApplyOf matches the server-side applies (PATCH) of one object, dry runs
// excluded: resource is the plural resource name ("configmaps").
func ApplyOf(resource, name string) Match {
	return Match{Method: http.MethodPatch, Path: "/" + resource + "/" + name, NoQuery: []string{"dryRun"}}
}

// DeleteOf matches the deletes of one object, dry runs excluded.
func DeleteOf(resource, name string) Match {
	return Match{Method: http.MethodDelete, Path: "/" + resource + "/" + name, NoQuery: []string{"dryRun"}}
}

func (m Match) String() string {
	var parts []string
	if m.Method != "" {
		parts = append(parts, m.Method)
	}
	if m.Path != "" {
		parts = append(parts, "*"+m.Path+"*")
	}
	if m.WholePath != "" {
		parts = append(parts, m.WholePath)
	}
	for _, q := range m.Query {
		parts = append(parts, "?"+q)
	}
	for _, q := range m.NoQuery {
		parts = append(parts, "!?"+q)
	}
	if m.Body != "" {
		parts = append(parts, fmt.Sprintf("body~%q", m.Body))
	}
	if m.NoBody != "" {
		parts = append(parts, fmt.Sprintf("body!~%q", m.NoBody))
	}
	if len(parts) == 0 {
		return "any request"
	}
	return strings.Join(parts, " ")
}

func (m Match) matches(r *http.Request, body []byte, bodyKnown bool) bool {
	if m.Method != "" && !strings.EqualFold(m.Method, r.Method) {
		return false
	}
	if m.Path != "" && !strings.Contains(r.URL.Path, m.Path) {
		return false
	}
	if m.WholePath != "" && r.URL.Path != m.WholePath {
		return false
	}
	q := r.URL.Query()
	for _, want := range m.Query {
		if !hasParam(q, want) {
			return false
		}
	}
	for _, not := range m.NoQuery {
		if hasParam(q, not) {
			return false
		}
	}
	if m.Body != "" && (!bodyKnown || !bytes.Contains(body, []byte(m.Body))) {
		return false
	}
	if m.NoBody != "" && (!bodyKnown || bytes.Contains(body, []byte(m.NoBody))) {
		return false
	}
	return true
}

func hasParam(q url.Values, p string) bool {
	name, value, withValue := strings.Cut(p, "=")
	vs, ok := q[name]
	if !ok || !withValue {
		return ok
	}
	for _, v := range vs {
		if v == value {
			return true
		}
	}
	return false
}

// Rule is a fault to inject.
type Rule struct {
	Match
	Action Action
	// Delay is how long a Delay rule waits, and how long an EndWatch rule
	// lets a watch run.
	Delay time.Duration
	// Status, Header and Body are an Answer rule's answer. Without a Body the
	// answer is a metav1.Status for Status (see StatusBody); a Retry-After
	// header is copied into its details, as the API server does.
	Status int
	Header http.Header
	Body   []byte
	// After lets this many matching requests through untouched before the
	// rule starts acting.
	After int
	// Times is how many requests the rule acts on before it stops matching;
	// zero means every one (a persistent fault).
	Times int
	// MaxHold bounds how long a Pause rule holds a response, and a Stall
	// rule a connection; zero means DefaultMaxHold.
	MaxHold time.Duration
}

func (r Rule) String() string {
	s := r.Action.String() + " " + r.Match.String()
	switch r.Action {
	case Delay:
		s += " by " + r.Delay.String()
	case Answer:
		s += " with " + strconv.Itoa(r.Status)
		if ra := r.Header.Get("Retry-After"); ra != "" {
			s += " (Retry-After: " + ra + ")"
		}
	case EndWatch:
		s += " after " + r.Delay.String()
	}
	if r.After > 0 {
		s += fmt.Sprintf(" after %d", r.After)
	}
	if r.Times > 0 {
		s += fmt.Sprintf(" %d time(s)", r.Times)
	} else {
		s += " persistently"
	}
	return s
}

// Fault is an injected rule: its counters and controls.
type Fault struct {
	p       *Proxy
	rule    Rule
	release chan struct{} // closed by Release

	// guarded by p.mu
	seen     int // matching requests, including those let through by After
	hits     int // requests acted on
	held     int // Pause: responses held right now
	removed  bool
	released bool
}

// Rule is the rule as injected.
func (f *Fault) Rule() Rule { return f.rule }

// Hits is how many requests the rule has acted on.
func (f *Fault) Hits() int {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	return f.hits
}

// Seen is how many requests matched the rule, including those it let through
// because of After or after it was exhausted (but not after Remove).
func (f *Fault) Seen() int {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	return f.seen
}

// Held is how many responses a Pause rule holds right now.
func (f *Fault) Held() int {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	return f.held
}

// WaitHits waits until the rule has acted on n requests.
func (f *Fault) WaitHits(ctx context.Context, n int) error {
	return f.p.waitFor(ctx, func() bool { return f.hits >= n }, func() string {
		return fmt.Sprintf("%d hit(s) of rule %q (have %d)", n, f.rule, f.hits)
	})
}

// WaitHeld waits until a Pause rule holds n responses at once: the requests
// have taken effect on the server and their clients are waiting.
func (f *Fault) WaitHeld(ctx context.Context, n int) error {
	return f.p.waitFor(ctx, func() bool { return f.held >= n }, func() string {
		return fmt.Sprintf("%d held response(s) of rule %q (have %d)", n, f.rule, f.held)
	})
}

// Release lets a Pause rule's held responses go, and the rule stops pausing
// requests (they pass through untouched from now on).
func (f *Fault) Release() {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	f.releaseLocked()
}

func (f *Fault) releaseLocked() {
	if !f.released {
		f.released = true
		close(f.release)
		f.p.notifyLocked()
	}
}

// Remove takes the rule out: it matches nothing from now on, and what it
// holds is released.
func (f *Fault) Remove() {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	f.removed = true
	f.releaseLocked()
}

// hold blocks a Pause rule's request until it is released.
func (f *Fault) hold() {
	maxHold := f.rule.MaxHold
	if maxHold <= 0 {
		maxHold = DefaultMaxHold
	}
	f.p.mu.Lock()
	f.held++
	f.p.notifyLocked()
	f.p.mu.Unlock()
	t := time.NewTimer(maxHold)
	defer t.Stop()
	select {
	case <-f.release:
	case <-f.p.done:
	case <-t.C:
	}
	f.p.mu.Lock()
	f.held--
	f.p.notifyLocked()
	f.p.mu.Unlock()
}

// Request is one request the proxy saw.
type Request struct {
	Time   time.Time
	Method string
	Path   string
	Query  string
	// Action is what the proxy did: "forward", "stream" (passed through as a
	// stream, no rule applies), or the acting rule's action.
	Action string
	// Status is the server's status code, when the request reached it and
	// the proxy saw the answer.
	Status int
}

func (r Request) String() string {
	s := r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	s += " -> " + r.Action
	if r.Status != 0 {
		s += " " + strconv.Itoa(r.Status)
	}
	return s
}

// newCA makes a throwaway CA for the proxy's serving certificates; clients
// of the proxy trust its PEM.
func newCA() (*pki.KeyPair, error) { return pki.NewCA("k8sconnect faultproxy CA") }

// servingCert is a loopback certificate that ca signs.
func servingCert(ca *pki.KeyPair) (tls.Certificate, error) {
	leaf, err := ca.Loopback("127.0.0.1")
	if err != nil {
		return tls.Certificate{}, err
	}
	return leaf.TLS(), nil
}

// RotateServingCert replaces the proxy's serving certificate with a new one
// from the same CA, as a cluster renews its API server's certificate: the
// next handshakes present it, CAPEM is unchanged.
func (p *Proxy) RotateServingCert() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	cert, err := servingCert(p.ca)
	if err != nil {
		return err
	}
	p.cert = cert
	return nil
}

// RotateCA replaces the proxy's CA and its serving certificate, as a cluster
// whose CA is rotated: clients must trust the returned PEM (also in CAPEM
// from now on) to connect.
func (p *Proxy) RotateCA() ([]byte, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	cert, err := servingCert(ca)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ca, p.cert, p.CAPEM = ca, cert, ca.CertPEM
	return ca.CertPEM, nil
}

// ShareCA makes p present a serving certificate signed by front's CA, as
// two clusters behind one front CA (Rancher, Teleport, one corporate PKI)
// do: a client that trusts front's CAPEM (also p's CAPEM from now on)
// connects to either, and the handshake alone cannot tell them apart.
func (p *Proxy) ShareCA(front *Proxy) error {
	front.mu.Lock()
	ca := front.ca
	front.mu.Unlock()
	cert, err := servingCert(ca)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ca, p.cert, p.CAPEM = ca, cert, ca.CertPEM
	return nil
}

func (p *Proxy) servingCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.cert
	return &c, nil
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is where clients connect: https://127.0.0.1:<port>.
	URL string
	// CAPEM is the CA that signed the proxy's serving certificate.
	CAPEM []byte
	// Upstream is the API server the proxy forwards to.
	Upstream string

	ca   *pki.KeyPair    // signs cert; guarded by mu
	cert tls.Certificate // what handshakes present; guarded by mu

	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	rp       *httputil.ReverseProxy
	base     *http.Transport
	done     chan struct{} // closed by Close
	logf     func(format string, args ...any)

	mu      sync.Mutex
	closed  bool
	faults  []*Fault
	conns   map[net.Conn]http.ConnState // open client connections, for Chaos
	log     []*Request                  // the last logSize requests
	count   int                         // requests seen in all
	changed chan struct{}
	wg      sync.WaitGroup
}

// Start starts a proxy in front of upstream (https://127.0.0.1:<port> or
// another loopback address), whose serving certificate upstreamCAPEM signed.
func Start(upstream string, upstreamCAPEM []byte) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: upstream %q: %w", upstream, err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q: want https://host:port", upstream)
	}
	if !loopback(u.Hostname()) {
		return nil, fmt.Errorf("faultproxy: upstream %q is not a loopback address; the proxy is for local test clusters only", upstream)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(upstreamCAPEM) {
		return nil, errors.New("faultproxy: no certificate in the upstream CA PEM")
	}
	ca, err := newCA()
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	cert, err := servingCert(ca)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	p := &Proxy{
		URL:      "https://" + ln.Addr().String(),
		CAPEM:    ca.CertPEM,
		ca:       ca,
		cert:     cert,
		Upstream: upstream,
		upstream: &url.URL{Scheme: u.Scheme, Host: u.Host},
		ln:       ln,
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		conns:    map[net.Conn]http.ConnState{},
		logf:     func(string, ...any) {},
	}
	p.base = &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.upstream)
			pr.Out.Host = p.upstream.Host
		},
		Transport:     &transport{p: p},
		FlushInterval: -1, // watches: every event at once
		ErrorLog:      log.New(io.Discard, "", 0),
		ModifyResponse: func(resp *http.Response) error {
			if e, ok := resp.Request.Context().Value(entryKey{}).(*Request); ok {
				p.mu.Lock()
				e.Status = resp.StatusCode
				p.mu.Unlock()
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, errCut) {
				hangUp(w)
				return
			}
			p.logff("faultproxy: %s %s: %v", r.Method, r.URL.Path, err)
			http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler: p,
		TLSConfig: &tls.Config{
			GetCertificate: p.servingCertificate,
			NextProtos:     []string{"http/1.1"},
			MinVersion:     tls.VersionTLS12,
		},
		// A non-nil, empty map turns HTTP/2 off: connections can be hijacked.
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState:         p.trackConn,
	}
	go func() { _ = p.srv.ServeTLS(ln, "", "") }()
	return p, nil
}

// New starts a proxy for a test and closes it when the test ends; faults and
// odd upstream errors are logged to the test.
func New(t testing.TB, upstream string, upstreamCAPEM []byte) *Proxy {
	t.Helper()
	p, err := Start(upstream, upstreamCAPEM)
	if err != nil {
		t.Fatal(err)
	}
	p.logf = t.Logf
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Inject adds a rule after the existing ones and returns its handle.
func (p *Proxy) Inject(r Rule) *Fault {
	if r.Action < Drop || r.Action > Stall {
		panic(fmt.Sprintf("faultproxy: unknown action %d", r.Action))
	}
	if r.Action == Answer && (r.Status < 100 || r.Status > 599) {
		panic(fmt.Sprintf("faultproxy: an answer needs a status code, have %d", r.Status))
	}
	f := &Fault{p: p, rule: r, release: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
	return f
}

// Clear removes every rule (and releases what they hold).
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		f.removed = true
		f.releaseLocked()
	}
	p.faults = nil
}

// Requests returns the last requests the proxy saw, oldest first.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Request, len(p.log))
	for i, e := range p.log {
		out[i] = *e
	}
	return out
}

// Count is how many requests the proxy has seen in all.
func (p *Proxy) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}

// Close stops the proxy: it stops listening, releases held responses, closes
// every connection and waits (a few seconds at most) for requests in flight.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	p.notifyLocked()
	p.mu.Unlock()

	err := p.srv.Close()
	finished := make(chan struct{})
	go func() { p.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
	}
	p.base.CloseIdleConnections()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (p *Proxy) logff(format string, args ...any) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if !closed {
		p.logf(format, args...)
	}
}

// notifyLocked wakes everyone waiting for a change of counters.
func (p *Proxy) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Proxy) waitFor(ctx context.Context, cond func() bool, what func() string) error {
	for {
		p.mu.Lock()
		if cond() {
			p.mu.Unlock()
			return nil
		}
		ch, closed := p.changed, p.closed
		desc := what()
		p.mu.Unlock()
		if closed {
			return fmt.Errorf("faultproxy closed while waiting for %s", desc)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", desc, ctx.Err())
		}
	}
}

type (
	faultKey struct{}
	entryKey struct{}
)

var errCut = errors.New("faultproxy: response cut")

// ServeHTTP applies the rules to one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		hangUp(w)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()

	if streaming(r) {
		p.stream(w, r)
		return
	}

	var body []byte
	bodyKnown := true
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil {
			hangUp(w)
			return
		}
		bodyKnown = len(body) <= MaxBody
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}

	f, hit := p.match(r, body, bodyKnown)
	action := "forward"
	if f != nil {
		action = f.rule.Action.String()
	}
	e := p.record(r, action)
	ctx := context.WithValue(r.Context(), entryKey{}, e)
	if f != nil {
		p.logff("faultproxy: %s %s (rule %q, hit %d)", action, r.Method+" "+r.URL.RequestURI(), f.rule, hit)
		switch f.rule.Action {
		case Drop:
			hangUp(w)
			return
		case Reset:
			resetConn(w)
			return
		case Stall:
			p.stall(w, r, f.rule)
			return
		case Delay:
			t := time.NewTimer(f.rule.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			case <-p.done:
				t.Stop()
				hangUp(w)
				return
			}
		case Answer:
			p.answer(w, r, f.rule, e)
			return
		case Cut, Pause, Truncate:
			ctx = context.WithValue(ctx, faultKey{}, f)
		}
	}
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// stream passes a watch, a followed log or an upgrade through, and ends a
// watch that an EndWatch rule matches.
func (p *Proxy) stream(w http.ResponseWriter, r *http.Request) {
	f, hit := p.match(r, nil, false)
	if f == nil {
		e := p.record(r, "stream")
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), entryKey{}, e)))
		return
	}
	e := p.record(r, f.rule.Action.String())
	p.logff("faultproxy: %s %s (rule %q, hit %d)", f.rule.Action, r.Method+" "+r.URL.RequestURI(), f.rule, hit)
	ctx := context.WithValue(context.WithValue(r.Context(), entryKey{}, e), faultKey{}, f)
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// endingBody is a watch's stream that ends cleanly (EOF) once its time is up,
// as a watch the server closes does.
type endingBody struct {
	io.ReadCloser
	ended atomic.Bool
}

func endAfter(body io.ReadCloser, d time.Duration) *endingBody {
	b := &endingBody{ReadCloser: body}
	time.AfterFunc(d, func() {
		b.ended.Store(true)
		_ = body.Close() // unblocks a Read waiting for the next event
	})
	return b
}

func (b *endingBody) Read(buf []byte) (int, error) {
	if b.ended.Load() {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(buf)
	if err != nil && b.ended.Load() {
		err = io.EOF
	}
	return n, err
}

// StatusBody is the metav1.Status the API server would write for code,
// naming the request; retryAfter (seconds) goes in its details when positive.
// A 404 of a path that names an object names it in its details, group, kind
// (the resource, as the server puts it) and name, as the server's NotFound
// does.
func StatusBody(code int, method, path string, retryAfter int) []byte {
	reason, ok := reasons[code]
	if !ok {
		reason = "Unknown"
	}
	status := map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "reason": reason, "code": code,
		"message": fmt.Sprintf("faultproxy answered %d %s to %s %s", code, http.StatusText(code), method, path),
	}
	details := map[string]any{}
	if retryAfter > 0 {
		details["retryAfterSeconds"] = retryAfter
	}
	if group, resource, name, ok := objectOf(path); ok && code == http.StatusNotFound {
		details["name"], details["kind"] = name, resource
		if group != "" {
			details["group"] = group
		}
		status["message"] = fmt.Sprintf("%s %q not found (faultproxy answered %d to %s %s)", resource, name, code, method, path)
	}
	if len(details) > 0 {
		status["details"] = details
	}
	b, _ := json.Marshal(status)
	return b
}

// objectOf reads the object a request's path names: /api/v1/[namespaces/<ns>/]<resource>/<name>
// or /apis/<group>/<version>/[namespaces/<ns>/]<resource>/<name> (a
// subresource after the name is allowed).
func objectOf(path string) (group, resource, name string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return "", "", "", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) < 2 {
		return "", "", "", false
	}
	return group, parts[0], parts[1], true
}

// reasons are the metav1.StatusReason the API server gives with each code.
var reasons = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusNotAcceptable:         "NotAcceptable",
	http.StatusConflict:              "Conflict",
	http.StatusGone:                  "Expired",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusUnprocessableEntity:   "Invalid",
	http.StatusTooManyRequests:       "TooManyRequests",
	http.StatusInternalServerError:   "InternalError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
	http.StatusGatewayTimeout:        "Timeout",
}

// answer writes an Answer rule's answer.
func (p *Proxy) answer(w http.ResponseWriter, r *http.Request, rule Rule, e *Request) {
	body := rule.Body
	for k, vs := range rule.Header {
		w.Header()[k] = append([]string(nil), vs...)
	}
	if body == nil {
		retryAfter, _ := strconv.Atoi(rule.Header.Get("Retry-After"))
		body = StatusBody(rule.Status, r.Method, r.URL.Path, retryAfter)
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	p.mu.Lock()
	e.Status = rule.Status
	p.mu.Unlock()
	w.WriteHeader(rule.Status)
	_, _ = w.Write(body)
}

// match finds the first rule that acts on r and counts the hit. Only an
// EndWatch rule acts on a streaming request, and only on a streaming one.
func (p *Proxy) match(r *http.Request, body []byte, bodyKnown bool) (*Fault, int) {
	watch := streaming(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.removed || watch != (f.rule.Action == EndWatch) || !f.rule.matches(r, body, bodyKnown) {
			continue
		}
		if f.rule.Times > 0 && f.hits >= f.rule.Times {
			continue // exhausted: a later rule may apply
		}
		if f.rule.Action == Pause && f.released {
			continue
		}
		f.seen++
		if f.seen <= f.rule.After {
			p.notifyLocked()
			return nil, 0
		}
		f.hits++
		p.notifyLocked()
		return f, f.hits
	}
	return nil, 0
}

func (p *Proxy) record(r *http.Request, action string) *Request {
	e := &Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Action: action}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if len(p.log) == logSize {
		copy(p.log, p.log[1:])
		p.log = p.log[:logSize-1]
	}
	p.log = append(p.log, e)
	return e
}

// streaming reports requests that stay open: watches, followed logs,
// protocol upgrades (exec, port-forward).
func streaming(r *http.Request) bool {
	q := r.URL.Query()
	switch {
	case q.Get("watch") == "true" || q.Get("watch") == "1":
		return true
	case strings.Contains(r.URL.Path, "/watch/"):
		return true
	case q.Get("follow") == "true":
		return true
	case r.Header.Get("Upgrade") != "":
		return true
	}
	return false
}

// stall holds a request it read without answering, until the client goes
// away, the proxy closes or the rule's MaxHold passes; then it closes the
// connection.
func (p *Proxy) stall(w http.ResponseWriter, r *http.Request, rule Rule) {
	maxHold := rule.MaxHold
	if maxHold <= 0 {
		maxHold = DefaultMaxHold
	}
	t := time.NewTimer(maxHold)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-p.done:
	case <-t.C:
	}
	hangUp(w)
}

// hangUp closes the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection
	}
	_ = conn.Close()
}

// resetConn closes the client's connection with a TCP reset: no TLS
// close_notify, and a zero linger time, so the kernel sends RST, not FIN.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	raw := conn
	if tc, ok := conn.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = raw.Close()
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errCut }

type readCloser struct {
	io.Reader
	io.Closer
}

// transport is the upstream round trip; it carries out Cut and Pause.
type transport struct{ p *Proxy }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	f, _ := req.Context().Value(faultKey{}).(*Fault)
	if f == nil {
		return t.p.base.RoundTrip(req)
	}
	if f.rule.Action == EndWatch {
		resp, err := t.p.base.RoundTrip(req)
		if err == nil {
			resp.Body = endAfter(resp.Body, f.rule.Delay)
		}
		return resp, err
	}
	// The request must reach the server and finish there whatever the client
	// does meanwhile (it may be killed while the response is held).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), upstreamTimeout)
	defer cancel()
	resp, err := t.p.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	_ = resp.Body.Close()
	if e, ok := req.Context().Value(entryKey{}).(*Request); ok {
		t.p.mu.Lock()
		e.Status = resp.StatusCode
		t.p.mu.Unlock()
	}
	if err != nil || len(body) > MaxResponse {
		return nil, errCut
	}
	switch f.rule.Action {
	case Cut:
		return nil, errCut
	case Pause:
		f.hold()
	}
	resp.ContentLength = int64(len(body))
	resp.TransferEncoding = nil
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if f.rule.Action == Truncate {
		// The reverse proxy copies the first half, then fails reading the
		// rest and aborts the handler: the connection closes short of the
		// promised Content-Length.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:len(body)/2]), failingReader{}))
	}
	return resp, nil
}

// Process is one process KillTree killed.
type Process struct {
	PID     int
	Command string // base name of argv[0]
}

func (p Process) String() string { return strconv.Itoa(p.PID) + " " + p.Command }
