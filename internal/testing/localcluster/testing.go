package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sharedCluster is the test binary's cluster.
type sharedCluster struct {
	mu    sync.Mutex
	main  bool     // Main is running the tests
	tried bool     // the first Shared has run
	c     *Cluster // the cluster, once had
	err   error    // why it could not be had
	owned bool     // started by this process: Main stops it
}

var shared sharedCluster

// Main runs a test binary's tests with a shared cluster and exits: call it as
// the whole of TestMain. The cluster starts on the first call to Shared, or
// comes from $K8SCONNECT_KUBECONFIG; Main stops a cluster it started when the
// tests end, and also on SIGINT or SIGTERM. If tests failed it keeps the
// component logs and prints where.
//
// cleanups run after the tests (and on SIGINT or SIGTERM), before the exit: a
// test binary's own leftovers, such as a provider it built, go with it.
func Main(m *testing.M, cleanups ...func()) {
	cleanup := func() {
		for _, f := range cleanups {
			f()
		}
	}
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		shared.mu.Lock() // kept: no cluster starts after this
		if shared.owned && shared.c != nil {
			fmt.Fprintf(os.Stderr, "localcluster: %v: stopping the local cluster\n", sig)
			_ = shared.c.Stop()
		}
		cleanup()
		os.Exit(130)
	}()

	code := m.Run()

	signal.Stop(sigs)
	shared.mu.Lock()
	if shared.owned && shared.c != nil {
		if code != 0 {
			logs := shared.c.stopKeepLogs()
			fmt.Fprintf(os.Stderr, "localcluster: tests failed; the local cluster's component logs are in %s\n", logs)
		} else if err := shared.c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: stopping the local cluster: %v\n", err)
		}
	}
	cleanup()
	os.Exit(code)
}

// Shared returns the test binary's cluster, starting it on first use (or
// attaching to the one named by $K8SCONNECT_KUBECONFIG). It fails the test if
// the cluster cannot be had, saying why, or if the package's TestMain does not
// call Main. Tests may call it in parallel.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the embedded cluster; -short (make test-unit) runs only the tests that do not")
	}
	c, err := shared.get(t)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var errNoMain = errors.New("localcluster.Shared needs localcluster.Main: add `func TestMain(m *testing.M) { localcluster.Main(m) }` to the package's tests")

func (s *sharedCluster) get(t testing.TB) (*Cluster, error) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.main {
		return nil, errNoMain
	}
	if s.tried {
		if s.err != nil {
			return nil, fmt.Errorf("no local cluster (see the first test that asked for it): %w", s.err)
		}
		return s.c, nil
	}
	s.tried = true
	if kc := os.Getenv(EnvKubeconfig); kc != "" {
		s.c, s.err = Load(kc)
		if s.err == nil {
			s.err = s.c.Check(context.Background())
		}
		if s.err != nil {
			s.c = nil
			s.err = fmt.Errorf("%s=%s: %w (start it with `make cluster-up`, or unset %s to have the tests start their own)", EnvKubeconfig, kc, s.err, EnvKubeconfig)
			return nil, s.err
		}
		t.Logf("localcluster: using the cluster of %s (%s)", kc, s.c.Host)
		return s.c, nil
	}
	begin := time.Now()
	s.c, s.err = Start(context.Background(), Options{})
	if s.err != nil {
		return nil, s.err
	}
	s.owned = true
	t.Logf("localcluster: started a cluster in %s at %s (state in %s)", time.Since(begin).Round(10*time.Millisecond), s.c.Host, s.c.Dir)
	return s.c, nil
}
