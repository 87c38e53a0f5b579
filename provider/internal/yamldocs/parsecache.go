package yamldocs

import (
	"crypto/sha256"
	"strconv"
	"sync"
)

// parsed keeps the manifests of documents parsed lately, by a digest of the
// document, for the calls that parse the same source again in one provider
// process: a manifest set's plan, Pulumi's second plan of it in the Update,
// and the apply each read its source, and a 4 MB bundle takes a quarter of a
// second of CPU to parse each time, more than its requests. Parsing is a
// function of the document alone (its text and where it is, which errors
// quote), so a kept result is never stale; only memory bounds it, as two
// generations: lookups promote a result from the older one, and when the
// newer one holds parseCacheBytes of text it becomes the older, whose
// results are dropped. A failed parse is not kept.
var parsed = parseCache{newer: map[[sha256.Size]byte]parseResult{}}

// parseCacheBytes bounds the text of one generation: 16 MB, about four of
// the largest bundles users apply (prometheus-operator's is 4.2 MB).
const parseCacheBytes = 16 << 20

type parseCache struct {
	mu         sync.Mutex
	newer      map[[sha256.Size]byte]parseResult
	older      map[[sha256.Size]byte]parseResult
	newerBytes int
}

func digestOf(d Document) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{d.Source, strconv.Itoa(d.Index), strconv.Itoa(d.Item), strconv.Itoa(d.Line), d.Text} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// get returns the kept result for a document of that digest.
func (c *parseCache) get(k [sha256.Size]byte) (parseResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.newer[k]; ok {
		return r, true
	}
	r, ok := c.older[k]
	if ok {
		c.keepLocked(k, r)
	}
	return r, ok
}

func (c *parseCache) put(k [sha256.Size]byte, r parseResult) {
	if r.err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepLocked(k, r)
}

func (c *parseCache) keepLocked(k [sha256.Size]byte, r parseResult) {
	if _, ok := c.newer[k]; ok {
		return
	}
	size := 0
	for _, m := range r.manifests {
		size += len(m.Text) + len(m.Body)
	}
	if c.newerBytes+size > parseCacheBytes {
		c.older, c.newer, c.newerBytes = c.newer, map[[sha256.Size]byte]parseResult{}, 0
	}
	c.newer[k] = r
	c.newerBytes += size
}

// reset drops every kept result: for benchmarks that measure parsing.
func (c *parseCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.newer, c.older, c.newerBytes = map[[sha256.Size]byte]parseResult{}, nil, 0
}
