package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// objectRequests counts the logged requests that touch one object (discovery
// is cached per process and not counted).
func objectRequests(t *testing.T, log, name string) []string {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "/configmaps/"+name) {
			out = append(out, line)
		}
	}
	return out
}

// Requests per object, counted against the real server. A create costs
// exactly four: a dry run of the create-only apply at plan, the same again when
// the engine plans once more during apply, and the two steps of the
// crash-safe, exclusive create (docs/adr/0001-crash-safe-create.md). A plan of
// an unchanged object costs one read and one dry run; an update one apply.
func TestAccObject_requestsPerObject(t *testing.T) {
	ns, name, conn := acctest.Namespace(t), acctest.Name("counted"), acctest.Connection(t)
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(conn, ns, name, "one"))
	w.MustApply()
	w.Cleanup()
	create := objectRequests(t, log, name)
	if len(create) != 4 {
		t.Errorf("create made %d requests on the object, want exactly 4 (2 dry runs, 2 applies):\n%s", len(create), strings.Join(create, "\n"))
	}

	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	plan := objectRequests(t, log, name)
	if len(plan) > 2 {
		t.Errorf("plan of an unchanged object made %d requests, want at most 2 (read + dry run):\n%s", len(plan), strings.Join(plan, "\n"))
	}

	w.Write(configMapConfig(conn, ns, name, "two"))
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	w.MustApply()
	var applies []string
	for _, l := range objectRequests(t, log, name) {
		if strings.HasPrefix(l, "PATCH") && !strings.Contains(l, "dryRun") {
			applies = append(applies, l)
		}
	}
	if len(applies) != 1 {
		t.Errorf("update made %d apply requests, want 1:\n%s", len(applies), strings.Join(applies, "\n"))
	}
	fmt.Fprintf(os.Stderr, "requests: create %d, plan %d, update apply %d\n", len(create), len(plan), len(applies))
}
