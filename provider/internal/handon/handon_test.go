package handon

import (
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// A value is taken once, only while fresh, only by its own client; Drop
// removes what matches; values nobody takes go at the next Put after TTL.
func TestStoreHandsOnOnceWhileFresh(t *testing.T) {
	var s Store[string, int]
	a, b := &connection.Client{}, &connection.Client{}
	s.Put(a, "x", 1, time.Now())
	if _, _, ok := s.Take(b, "x"); ok {
		t.Error("another client took the value")
	}
	if v, _, ok := s.Take(a, "x"); !ok || v != 1 {
		t.Fatalf("Take right after Put: %v, %v", v, ok)
	}
	if _, _, ok := s.Take(a, "x"); ok {
		t.Error("a value was taken twice")
	}
	s.Put(a, "old", 2, time.Now().Add(-TTL-time.Second))
	if _, _, ok := s.Take(a, "old"); ok {
		t.Error("a value read longer ago than TTL was taken")
	}
	s.Put(a, "y", 3, time.Now())
	s.Put(a, "z", 4, time.Now())
	s.Drop(a, func(k string) bool { return k == "y" })
	if _, _, ok := s.Take(a, "y"); ok {
		t.Error("a dropped value was taken")
	}
	if _, _, ok := s.Take(a, "z"); !ok {
		t.Error("Drop removed a value that did not match")
	}

	s.Put(a, "stale", 5, time.Now().Add(-2*TTL))
	s.mu.Lock()
	s.swept = time.Now().Add(-2 * TTL)
	s.mu.Unlock()
	s.Put(a, "fresh", 6, time.Now())
	if n := s.Len(a); n != 1 {
		t.Errorf("kept %d values, want only the fresh one", n)
	}
}
