package main

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of path that are in the page cache.
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unix.Munmap(m); err != nil {
			t.Error(err)
		}
	}()
	pages := (len(m) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// A plugin just written is in the page cache; once dropped, none of it is.
func TestDropFromPageCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o755); err != nil {
		t.Fatal(err)
	}
	before := residentPages(t, path)
	if before == 0 {
		t.Fatal("a file just written is not in the page cache: the check below could not fail")
	}
	if err := dropFromPageCache(path); err != nil {
		t.Fatal(err)
	}
	if after := residentPages(t, path); after != 0 {
		t.Errorf("%d of %d pages still in the page cache after the drop (%d before)", after, (4<<20)/os.Getpagesize(), before)
	}
}
