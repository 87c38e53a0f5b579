// Package gcsettings sets the garbage collector of the provider plugins, both
// of which keep a small live heap (see provider/plugin/rpccontext) while
// allocating a lot per request: decoding and encoding every plan and state,
// and under Pulumi converting them to and from the bridge's property values
// too.
//
// At Go's default (GOGC=100) the collector runs every few MiB and takes 15-20%
// of each plugin's CPU in make bench PROFILE=1. With more headroom a Terraform
// update of 200 objects takes 8.6-9.7 s on the embedded cluster, against
// 9.5-10.6 s at the default.
//
// A memory limit bounds the headroom, since most of a plugin's resident memory
// is its own binary's pages and the target is 100 MB in all
// (docs/performance.md): each plugin passes its own. A user's own GOGC or
// GOMEMLIMIT wins.
package gcsettings

import (
	"os"
	"runtime/debug"
	"sync"
)

// Percent is GOGC: the heap may grow to five times what the last collection
// left before the next one, unless the limit comes first.
const Percent = 400

// Limits, the runtime's memory (heap, stacks, its own structures) at which
// the collector runs whatever Percent allows.
const (
	// TerraformLimit: about 43 MiB of the Terraform plugin's resident memory
	// is its mapped binary, so the heap may use about 50 of the 95 MiB target.
	// The limit was 28 MiB, set on ConfigMaps (live heap 8-9 MiB); with a
	// vendor bundle's CRDs the heap in use passed it (40 MiB while creating
	// ten of them at once) and the collector took a third of the plugin's CPU.
	// Once large values were kept once (docs/adr/0015-large-values-by-digest.md)
	// and a create stopped deep-copying its object, the bundle's create peaked
	// at 27 MiB in use, and under this limit the plugin's peak RSS was 86 MiB
	// in its create and its plan (79-80 MiB at 40 MiB, 94 MiB at 56 MiB).
	TerraformLimit = 48 << 20
	// PulumiLimit: the Pulumi plugin's live heap is 10-12 MiB on one object
	// per resource; its binary (the bridge and its dependencies) is over
	// twice the Terraform plugin's size, and its pages are 70 of its 110-140
	// MiB. At 40 MiB (anonymous memory then peaked at 37-40 MiB, 33-41 at
	// Go's default) a manifest set of the 73-object bundle, whose heap in use
	// passes 40 MiB, had the collector at 41% of the plugin's CPU and 14% more
	// in assists: 69 ms per object to create, 1.27x kubectl. At 64 MiB the
	// same create took 29-30 ms per object and 0.99-1.01x, the CRD-field
	// update 1.17x -> 0.81x, with the plugin's peak RSS unchanged (129-138
	// MiB, anonymous 61-65; make bench WORKLOAD=bundle, 2026-11-29, quiet).
	// The price is paid by one resource per object: the same bundle's peak
	// RSS went from 115 to 128-134 MB (its CPU from 51 to 30-31 ms per
	// object to create), further from the 100 MB it already missed.
	PulumiLimit = 64 << 20
)

// Tune sets Percent and limit, each unless the user set it.
func Tune(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

// SetLimit is the collector's limit while a whole bundle is in memory at once,
// as a manifest set's plan or apply holds it: 64 MiB, Pulumi's own. At the
// Terraform plugin's 48 MiB the bundle's set kept the collector running (40%
// of the plugin's CPU in the create, make bench PROFILE=1), while one
// resource per object, which the lower limit keeps under its 100 MB, never
// holds more than one object's worth. A set's plugins are held to 150 MB.
const SetLimit = 64 << 20

var raised struct {
	mu     sync.Mutex
	n      int   // raises not yet ended
	before int64 // the limit before the first of them
}

// Raise lets the collector use limit until the returned function is called,
// when the limit goes back to what it was once no other raise is running. It
// never lowers the limit, and leaves a user's GOMEMLIMIT as it is.
func Raise(limit int64) (end func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	raised.mu.Lock()
	defer raised.mu.Unlock()
	current := debug.SetMemoryLimit(-1)
	if raised.n == 0 {
		raised.before = current
	}
	raised.n++
	if limit > current {
		debug.SetMemoryLimit(limit)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			raised.mu.Lock()
			defer raised.mu.Unlock()
			if raised.n--; raised.n == 0 {
				debug.SetMemoryLimit(raised.before)
			}
		})
	}
}
