package acctest

import (
	"os"
	"strings"
	"testing"
)

// The provider writes one line per API request it sends ("METHOD URL") to the
// file K8SCONNECT_REQUEST_LOG names; tests count them against the real server.

// RequestsTo returns the logged requests that touch one object, given by its
// plural resource ("configmaps") and name, in the order they were sent.
// Discovery and the cluster's identity are read once per process and do not
// touch the object.
//
// A log that is missing or holds no request at all fails the test: every run
// the tests count reads the cluster, so the provider did not log (the
// variable did not reach its process), and a count of nothing would prove
// nothing.
func RequestsTo(t testing.TB, log, resource, name string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(b)) == "" {
		t.Fatalf("the request log %s is missing or empty: the provider logged no request at all (did "+
			"K8SCONNECT_REQUEST_LOG reach its process?), so counting the requests to %s %s would prove nothing",
			log, resource, name)
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		path, _, _ := strings.Cut(line, "?")
		if strings.HasSuffix(path, "/"+resource+"/"+name) {
			out = append(out, line)
		}
	}
	return out
}

// ClearRequestLog empties the request log, so that the next count starts
// from the next request.
func ClearRequestLog(t testing.TB, log string) {
	t.Helper()
	if err := os.Truncate(log, 0); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
