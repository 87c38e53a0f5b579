package acctest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

// Flaky-network tests of every engine share these: a proxy that cuts every
// connection at random moments, and a record of every ConfigMap the API
// server created or deleted, read straight from the cluster (not through the
// proxy), so that an object made twice or replaced shows even when it
// happened and was undone within one run.

// FlakyLink starts cutting every connection through p at random moments,
// MeanInterval apart on average, until the test ends. The seed is logged;
// K8SCONNECT_CHAOS_SEED repeats a run's sequence of moments.
func FlakyLink(t testing.TB, p *faultproxy.Proxy, meanInterval time.Duration) *faultproxy.Chaos {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("K8SCONNECT_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("K8SCONNECT_CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("flaky link: a cut every %s on average, seed %d (K8SCONNECT_CHAOS_SEED=%d repeats it)", meanInterval, seed, seed)
	c := p.Chaos(faultproxy.ChaosOptions{Seed: seed, MeanInterval: meanInterval})
	t.Cleanup(func() {
		c.Stop()
		t.Logf("%s", c)
	})
	return c
}

// History is what the API server did to a namespace's ConfigMaps of one
// name prefix: the UID of every object it created, and its deletions.
type History struct {
	mu      sync.Mutex
	created map[string][]string // name: UIDs in order of creation
	deleted map[string][]string // name: UIDs in order of deletion
	failed  error
}

// WatchConfigMaps records, from now until the test ends, every creation
// and deletion of a ConfigMap in ns whose name starts with prefix. The
// namespace must hold none of them yet.
func WatchConfigMaps(t testing.TB, ns, prefix string) *History {
	t.Helper()
	cs := Clientset(t)
	ctx, cancel := context.WithCancel(context.Background())
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h := &History{created: map[string][]string{}, deleted: map[string][]string{}}
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, prefix) {
			cancel()
			t.Fatalf("namespace %s already holds ConfigMap %s", ns, cm.Name)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rv := list.ResourceVersion
		for ctx.Err() == nil {
			w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					h.fail(fmt.Errorf("watching ConfigMaps: %w", err))
				}
				return
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					h.fail(fmt.Errorf("watch error: %v", ev.Object))
					w.Stop()
					return
				}
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					continue
				}
				rv = cm.ResourceVersion
				if !strings.HasPrefix(cm.Name, prefix) {
					continue
				}
				h.mu.Lock()
				switch ev.Type {
				case watch.Added:
					h.created[cm.Name] = append(h.created[cm.Name], string(cm.UID))
				case watch.Deleted:
					h.deleted[cm.Name] = append(h.deleted[cm.Name], string(cm.UID))
				}
				h.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *History) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == nil {
		h.failed = err
	}
}

// Created is how many objects the server has created so far.
func (h *History) Created() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, uids := range h.created {
		n += len(uids)
	}
	return n
}

// ExpectCreatedOnce checks that each of names was created exactly once and
// not deleted, and nothing else was created: no object made twice, no UID
// changed. It returns each name's UID.
func (h *History) ExpectCreatedOnce(t testing.TB, names []string) map[string]string {
	t.Helper()
	h.settle()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != nil {
		t.Fatalf("the record of creations is incomplete: %v", h.failed)
	}
	uids := map[string]string{}
	var problems []string
	for _, name := range names {
		switch c := h.created[name]; {
		case len(c) != 1:
			problems = append(problems, fmt.Sprintf("%s created %d times (UIDs %v)", name, len(c), c))
		case len(h.deleted[name]) > 0:
			problems = append(problems, fmt.Sprintf("%s deleted (UIDs %v)", name, h.deleted[name]))
		default:
			uids[name] = c[0]
		}
	}
	if len(h.created) != len(names) {
		problems = append(problems, fmt.Sprintf("%d distinct names created, want %d", len(h.created), len(names)))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("the API server's record of creations:\n%s", strings.Join(problems, "\n"))
	}
	return uids
}

// ExpectDeletedOnce checks that every object created was deleted exactly
// once, and that nothing was created since uids were taken.
func (h *History) ExpectDeletedOnce(t testing.TB, uids map[string]string) {
	t.Helper()
	h.settle()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed != nil {
		t.Fatalf("the record of deletions is incomplete: %v", h.failed)
	}
	var problems []string
	for name, uid := range uids {
		if c := h.created[name]; len(c) != 1 || c[0] != uid {
			problems = append(problems, fmt.Sprintf("%s created again (UIDs %v)", name, c))
		}
		if d := h.deleted[name]; len(d) != 1 || d[0] != uid {
			problems = append(problems, fmt.Sprintf("%s deleted %d times (UIDs %v), want once (%s)", name, len(d), d, uid))
		}
	}
	if len(h.created) != len(uids) {
		problems = append(problems, fmt.Sprintf("%d distinct names created, want %d", len(h.created), len(uids)))
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("the API server's record of deletions:\n%s", strings.Join(problems, "\n"))
	}
}

// settle gives the watch a moment to deliver the last events of a run.
func (h *History) settle() { time.Sleep(2 * time.Second) }

// ExpectLive checks the namespace's ConfigMaps of the prefix against uids:
// the same names and UIDs, each ours (owner annotation set, no pending
// create marker).
func ExpectLive(t testing.TB, ns, prefix string, uids map[string]string) {
	t.Helper()
	list, err := Clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, cm := range list.Items {
		if !strings.HasPrefix(cm.Name, prefix) {
			continue
		}
		live++
		switch {
		case uids[cm.Name] != string(cm.UID):
			t.Fatalf("%s has UID %s, want %q", cm.Name, cm.UID, uids[cm.Name])
		case cm.Annotations[AnnotationOwnedBy] == "":
			t.Fatalf("%s carries no %s annotation", cm.Name, AnnotationOwnedBy)
		case cm.Annotations[AnnotationCreatePending] != "":
			t.Fatalf("%s still carries the %s marker", cm.Name, AnnotationCreatePending)
		}
	}
	if live != len(uids) {
		t.Fatalf("%d ConfigMaps live in %s, want %d", live, ns, len(uids))
	}
}
