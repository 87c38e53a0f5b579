package faultproxy

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"
)

// ChaosOptions describe a flaky network: at random moments every connection
// the proxy holds is closed at once, whatever it is doing (idle, sending a
// request, waiting for the server, or halfway through the answer). A request
// cut this way may or may not have reached the server, which is the
// uncertainty a real broken link leaves.
type ChaosOptions struct {
	// Seed makes the moments reproducible: the same seed gives the same
	// sequence of intervals.
	Seed uint64
	// MeanInterval is the average time between cuts; the intervals are drawn
	// from an exponential distribution, so cuts come at memoryless random
	// moments, sometimes in quick succession.
	MeanInterval time.Duration
	// Duration stops the cuts after this long; zero means until Stop.
	Duration time.Duration
}

// Chaos is a running ChaosOptions: its counters and its off switch.
type Chaos struct {
	p    *Proxy
	opts ChaosOptions
	stop chan struct{}
	done chan struct{}
	once sync.Once

	// guarded by p.mu
	cuts        int
	severed     int
	interrupted int
}

// Chaos starts cutting connections as o says, until o.Duration has passed,
// Stop is called or the proxy closes. The test log gets one line per cut.
func (p *Proxy) Chaos(o ChaosOptions) *Chaos {
	if o.MeanInterval <= 0 {
		panic("faultproxy: ChaosOptions.MeanInterval must be positive")
	}
	c := &Chaos{p: p, opts: o, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *Chaos) run() {
	defer close(c.done)
	rng := rand.New(rand.NewPCG(c.opts.Seed, 0x6b38736368616f73))
	var end <-chan time.Time
	if c.opts.Duration > 0 {
		t := time.NewTimer(c.opts.Duration)
		defer t.Stop()
		end = t.C
	}
	for {
		wait := time.Duration(rng.ExpFloat64() * float64(c.opts.MeanInterval))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-end:
			t.Stop()
			return
		case <-c.stop:
			t.Stop()
			return
		case <-c.p.done:
			t.Stop()
			return
		}
		severed, interrupted := c.p.cutAll()
		c.p.mu.Lock()
		c.cuts++
		c.severed += severed
		c.interrupted += interrupted
		n := c.cuts
		c.p.notifyLocked()
		c.p.mu.Unlock()
		c.p.logff("faultproxy: chaos cut %d: closed %d connection(s), %d with a request in flight", n, severed, interrupted)
	}
}

// Stop ends the cuts and waits until no more can happen.
func (c *Chaos) Stop() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

// Cuts is how many times connections were cut.
func (c *Chaos) Cuts() int {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.cuts
}

// Severed is how many connections were closed in all.
func (c *Chaos) Severed() int {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.severed
}

// Interrupted is how many connections were closed while a request on them
// was in flight: each is a request the client saw fail.
func (c *Chaos) Interrupted() int {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.interrupted
}

func (c *Chaos) String() string {
	return fmt.Sprintf("chaos (seed %d, a cut every %s on average): %d cut(s), %d connection(s) closed, %d with a request in flight",
		c.opts.Seed, c.opts.MeanInterval, c.Cuts(), c.Severed(), c.Interrupted())
}

// trackConn is the server's ConnState hook: it keeps the open client
// connections and whether each is serving a request.
func (p *Proxy) trackConn(conn net.Conn, state http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch state {
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, conn)
	default:
		p.conns[conn] = state
	}
}

// CloseConnections closes every open client connection now, as a load
// balancer that restarts does: the clients' next requests open new ones
// (and so meet a rotated certificate). It returns how many it closed.
func (p *Proxy) CloseConnections() int {
	severed, _ := p.cutAll()
	return severed
}

// cutAll closes every open client connection.
func (p *Proxy) cutAll() (severed, interrupted int) {
	p.mu.Lock()
	conns := make([]net.Conn, 0, len(p.conns))
	for conn, state := range p.conns {
		conns = append(conns, conn)
		if state == http.StateActive {
			interrupted++
		}
	}
	p.mu.Unlock()
	for _, conn := range conns {
		_ = conn.Close()
	}
	return len(conns), interrupted
}
