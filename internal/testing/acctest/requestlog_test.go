package acctest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatalf records instead of stopping.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

// A count taken from a log the provider never wrote (or left empty) fails,
// rather than finding zero requests and passing.
func TestRequestsToRefusesAMissingOrEmptyLog(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, log := range []string{filepath.Join(dir, "missing.log"), empty} {
		r := &fatalRecorder{TB: t}
		if got := RequestsTo(r, log, "configmaps", "x"); got != nil || r.fatal == "" {
			t.Errorf("%s: got %v and no failure; a missing or empty log must fail the test", filepath.Base(log), got)
		}
	}
	logged := filepath.Join(dir, "logged.log")
	if err := os.WriteFile(logged, []byte("GET /api/v1/namespaces/n/configmaps/x\nGET /api/v1/namespaces/n/configmaps/y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &fatalRecorder{TB: t}
	if got := RequestsTo(r, logged, "configmaps", "x"); len(got) != 1 || r.fatal != "" {
		t.Errorf("a log with requests: got %v (failure %q), want the one request to x", got, r.fatal)
	}
}
