package pulumitest

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// The Maven repository is shared by checkouts that may hold different builds
// of the Java SDK at one version: a checkout installs its own only when no
// test process is using another one.
func TestInstallJavaSDKSharesOneBuildAtATime(t *testing.T) {
	repository := t.TempDir()
	sdk := func(content string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		// A build product: not part of the SDK's identity.
		if err := os.MkdirAll(filepath.Join(dir, "target"), 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	first, same, other := sdk("one"), sdk("one"), sdk("two")
	var installs atomic.Int32
	install := func() error { installs.Add(1); return nil }

	releaseFirst, err := installJavaSDK(first, repository, install)
	if err != nil || installs.Load() != 1 {
		t.Fatalf("first install: err %v, %d installs; want one", err, installs.Load())
	}
	if err := os.WriteFile(filepath.Join(first, "target", "x.jar"), []byte("built"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The same SDK from another checkout is shared at once, not installed again.
	releaseSame, err := installJavaSDK(same, repository, install)
	if err != nil || installs.Load() != 1 {
		t.Fatalf("the same SDK: err %v, %d installs; want the first one only", err, installs.Load())
	}
	releaseSame()

	// Another build waits while the first is in use, then installs.
	done := make(chan error, 1)
	go func() {
		release, err := installJavaSDK(other, repository, install)
		if err == nil {
			release()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("another build of the SDK was installed (err %v) while the first was in use", err)
	case <-time.After(3 * time.Second):
	}
	releaseFirst()
	select {
	case err := <-done:
		if err != nil || installs.Load() != 2 {
			t.Fatalf("after the first was released: err %v, %d installs; want two", err, installs.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("another build of the SDK still waits after the first was released")
	}
}
