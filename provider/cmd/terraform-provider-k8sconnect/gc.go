package main

import (
	"os"
	"runtime/debug"
)

// Garbage collection settings for a plugin whose live heap is small (8-9 MiB,
// whatever the number of objects: see provider/internal/rpccontext) while it
// allocates a lot per request (decoding and encoding every plan and state).
// At Go's default (GOGC=100) the collector ran every few MiB and took 15-20%
// of the plugin's CPU in make bench PROFILE=1. Four times the headroom cut an
// update of 200 objects from 9.6 s to 8.7 s on the embedded cluster, and the
// memory limit keeps the heap's peak in check should the live heap grow: the
// collector then runs more often instead of letting the heap reach five times
// its live size. A user's own GOGC or GOMEMLIMIT wins.
const (
	gcPercent   = 400
	memoryLimit = 64 << 20
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
