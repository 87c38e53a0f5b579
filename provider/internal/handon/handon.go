// Package handon keeps what one call of a resource read from the cluster for
// the next call in the same provider process to take. Terraform and OpenTofu
// refresh a resource and plan it milliseconds apart, and Pulumi plans an
// update more than once in a row; each would otherwise read the same objects
// again. The framework makes a new Resource for every call, so a Store lives
// at a package's level, by client (one cluster and one set of credentials).
//
// A value is taken at most once, and only while fresh (TTL after it was
// read), so a later call never acts on a stale copy; the owner drops it
// before any write to what it copies. Values nobody takes (a refresh-only
// run reads everything and plans nothing) go once stale, not with the
// process.
package handon

import (
	"sync"
	"time"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// TTL is how long after it was read a value may be taken.
const TTL = 30 * time.Second

// Store holds values of type V by client and key K. Its zero value is ready.
type Store[K comparable, V any] struct {
	mu      sync.Mutex
	clients map[*connection.Client]map[K]entry[V]
	swept   time.Time // when stale values were last dropped
}

type entry[V any] struct {
	value V
	seen  time.Time
}

// Put keeps v, read at seen, for c and k, in place of any value there.
func (s *Store[K, V]) Put(c *connection.Client, k K, v V, seen time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[*connection.Client]map[K]entry[V]{}
	}
	if now := time.Now(); now.Sub(s.swept) > TTL {
		for _, kept := range s.clients {
			for key, e := range kept {
				if now.Sub(e.seen) > TTL {
					delete(kept, key)
				}
			}
		}
		s.swept = now
	}
	kept := s.clients[c]
	if kept == nil {
		kept = map[K]entry[V]{}
		s.clients[c] = kept
	}
	kept[k] = entry[V]{value: v, seen: seen}
}

// Take returns, and removes, the value kept for c and k with when it was
// read, if it is fresh.
func (s *Store[K, V]) Take(c *connection.Client, k K) (V, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.clients[c][k]
	delete(s.clients[c], k)
	if !ok || time.Since(e.seen) > TTL {
		var zero V
		return zero, time.Time{}, false
	}
	return e.value, e.seen, true
}

// Drop removes every value kept for c whose key matches.
func (s *Store[K, V]) Drop(c *connection.Client, match func(K) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.clients[c] {
		if match(k) {
			delete(s.clients[c], k)
		}
	}
}

// Len is how many values are kept for c, fresh or not.
func (s *Store[K, V]) Len(c *connection.Client) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients[c])
}
