package gcsettings

import (
	"math"
	"runtime/debug"
	"testing"
)

// The plugins' settings apply only where the user set none: a GOGC or
// GOMEMLIMIT in the engine's environment, which the plugin inherits, wins.
func TestTune(t *testing.T) {
	restore := func(percent int, limit int64) {
		t.Cleanup(func() {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(limit)
		})
	}
	restore(debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64))
	current := func() (int, int64) {
		percent := debug.SetGCPercent(-1)
		debug.SetGCPercent(percent)
		return percent, debug.SetMemoryLimit(-1) // a negative limit only reads it
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Tune(PulumiLimit)
	if percent, limit := current(); percent != Percent || limit != PulumiLimit {
		t.Errorf("with neither variable set: GOGC=%d, limit %d; want %d and %d", percent, limit, Percent, PulumiLimit)
	}

	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	Tune(TerraformLimit)
	// The runtime read the variables at start; Tune must only leave its
	// settings alone, which leaves what was there.
	if percent, limit := current(); percent != 100 || limit != math.MaxInt64 {
		t.Errorf("with the user's GOGC and GOMEMLIMIT: GOGC=%d, limit %d; want both left alone", percent, limit)
	}
}

// A raise holds while any raise runs, goes back to the limit before the
// first when the last ends (ending one twice counts once), never lowers the
// limit, and leaves a user's GOMEMLIMIT alone.
func TestRaise(t *testing.T) {
	before := debug.SetMemoryLimit(TerraformLimit)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	limit := func() int64 { return debug.SetMemoryLimit(-1) }

	first := Raise(SetLimit)
	second := Raise(SetLimit)
	if got := limit(); got != SetLimit {
		t.Fatalf("while raised: limit %d, want %d", got, SetLimit)
	}
	first()
	first()
	if got := limit(); got != SetLimit {
		t.Errorf("one of two raises ended (twice): limit %d, want %d still", got, SetLimit)
	}
	second()
	if got := limit(); got != TerraformLimit {
		t.Errorf("every raise ended: limit %d, want %d again", got, TerraformLimit)
	}

	debug.SetMemoryLimit(2 * SetLimit)
	end := Raise(SetLimit)
	if got := limit(); got != 2*SetLimit {
		t.Errorf("a raise below the limit lowered it to %d", got)
	}
	end()

	debug.SetMemoryLimit(TerraformLimit)
	t.Setenv("GOMEMLIMIT", "40MiB")
	end = Raise(SetLimit)
	if got := limit(); got != TerraformLimit {
		t.Errorf("with the user's GOMEMLIMIT: limit %d, want it left at %d", got, TerraformLimit)
	}
	end()
}
