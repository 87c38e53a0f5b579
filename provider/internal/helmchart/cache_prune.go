package helmchart

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The cache would otherwise only grow: every version of every chart ever
// loaded stays. An entry's modification time is set on every use, and
// entries unused for unusedFor are removed, as are partial files a process
// left when it died writing. Pruning runs after a download, at most once per
// pruneEvery whichever process gets there first, so a load that finds
// everything cached costs no directory walk.
const (
	unusedFor     = 90 * 24 * time.Hour
	pruneEvery    = 24 * time.Hour
	partialMaxAge = time.Hour
	pruneMarker   = ".last-pruned"
)

// cacheAreas are the cache's subdirectories (see archiveCache).
var cacheAreas = []string{"sha256", "unverified", indexArea, urlArea, provArea}

// markUsed records a use of the entry at path for maybePrune. A cache it
// cannot write to is still read.
func markUsed(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// maybePrune removes what has not been used for long, unless a prune ran in
// the last pruneEvery.
func (c *archiveCache) maybePrune(now time.Time) {
	marker := filepath.Join(c.dir, pruneMarker)
	if info, err := os.Stat(marker); err == nil && now.Sub(info.ModTime()) < pruneEvery {
		return
	}
	// The marker is moved first, so processes loading at the same moment do
	// not all walk the cache.
	if f, err := os.OpenFile(marker, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_ = f.Close()
	}
	if err := os.Chtimes(marker, now, now); err != nil {
		return
	}
	for _, area := range cacheAreas {
		dir := filepath.Join(c.dir, area)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
			age := now.Sub(info.ModTime())
			partial := strings.HasPrefix(e.Name(), ".partial-")
			if (partial && age > partialMaxAge) || (!partial && age > unusedFor) {
				_ = os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}
