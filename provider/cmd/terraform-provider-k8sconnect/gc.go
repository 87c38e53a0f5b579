package main

import (
	"os"
	"runtime/debug"
)

// Garbage collection settings for a plugin whose live heap is small (8-9 MiB,
// whatever the number of objects: see internal/rpccontext) while it allocates
// a lot per request (decoding and encoding every plan and state). At Go's
// default (GOGC=100) the collector ran every few MiB and took 15-20% of the
// plugin's CPU in make bench PROFILE=1. More headroom cut an update of 200
// objects from 9.5-10.6 s to 8.6-9.7 s on the embedded cluster.
//
// The memory limit is what bounds the headroom: about 57 MiB of the plugin's
// resident memory is its own mapped code, and at GOGC=400 under a 64 MiB
// limit the process reached 98 MiB (make bench, N=1000), against a target of
// 100 MB; under this one it peaks at 74-75 MiB. Under the limit the collector runs when the runtime's
// memory reaches 28 MiB, about three times the live heap. A user's own GOGC or
// GOMEMLIMIT wins.
const (
	gcPercent   = 400
	memoryLimit = 28 << 20
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
