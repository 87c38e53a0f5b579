//go:build !linux

package main

// dropFromPageCache is dropFromPageCache in pagecache_linux.go; the bench
// reads /proc and measures on Linux only.
func dropFromPageCache(string) error { return nil }
