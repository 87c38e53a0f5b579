package object_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// counted declares a ConfigMap; every one but c0 waits for c0.
func counted(conn, ns, label, name, value string) string {
	after := "\n  depends_on = [k8sconnect_object.c0]"
	if label == "c0" {
		after = ""
	}
	return fmt.Sprintf(`
resource "k8sconnect_object" "%s" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
  %s%s
}
`, label, name, ns, value, conn, after)
}

// Requests per object, counted against the real server.
//
// A create costs exactly three: the dry run of the create-only apply at plan,
// and the two steps of the crash-safe, exclusive create
// (docs/adr/0001-crash-safe-create.md). The engine plans each create once
// more right before applying it; once the provider has applied anything in
// that run, that re-plan sends nothing (providerdata.Phase). So only the
// creates re-planned before the run's first apply (at most -parallelism of
// them) cost a fourth request: here the first object, which every other one
// depends on.
//
// A plan of an unchanged object costs one read and one dry run; an update,
// one apply.
func TestAccObject_requestsPerObject(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	base := acctest.Name("counted")
	names := []string{"c0", "c1", "c2", "c3"}
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	config := func(value string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(counted(conn, ns, n, base+"-"+n, value))
		}
		return b.String()
	}
	w := acctest.NewWorkdir(t)
	w.Write(config("one"))
	w.MustApply()
	w.Cleanup()
	var summary []string
	for i, n := range names {
		got := acctest.RequestsTo(t, log, "configmaps", base+"-"+n)
		want := 3
		if i == 0 {
			want = 4 // re-planned before the run's first apply
		}
		if len(got) != want {
			t.Errorf("create of %s made %d requests on the object, want exactly %d:\n%s", n, len(got), want, strings.Join(got, "\n"))
		}
		dryRuns := 0
		for _, l := range got {
			if strings.Contains(l, "dryRun") {
				dryRuns++
			}
		}
		if dryRuns != want-2 {
			t.Errorf("create of %s made %d dry runs, want %d (the plan's check%s):\n%s", n, dryRuns, want-2,
				map[bool]string{true: " and the first re-plan's", false: ""}[i == 0], strings.Join(got, "\n"))
		}
		summary = append(summary, fmt.Sprintf("%s %d", n, len(got)))
	}

	acctest.ClearRequestLog(t, log)
	if r := w.Plan(); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	for _, n := range names {
		// The read alone: nobody changed the object since the apply, so a dry
		// run would answer what the apply stored (ownership.UnchangedSinceApply).
		if got := acctest.RequestsTo(t, log, "configmaps", base+"-"+n); len(got) != 1 || !strings.HasPrefix(got[0], "GET") {
			t.Errorf("plan of unchanged %s made %d requests, want exactly 1 (the read):\n%s", n, len(got), strings.Join(got, "\n"))
		}
	}

	w.Write(config("two"))
	acctest.ClearRequestLog(t, log)
	w.MustApply()
	for _, n := range names {
		var applies []string
		for _, l := range acctest.RequestsTo(t, log, "configmaps", base+"-"+n) {
			if strings.HasPrefix(l, "PATCH") && !strings.Contains(l, "dryRun") {
				applies = append(applies, l)
			}
		}
		if len(applies) != 1 {
			t.Errorf("update of %s made %d apply requests, want 1:\n%s", n, len(applies), strings.Join(applies, "\n"))
		}
	}
	fmt.Fprintf(os.Stderr, "requests per object on create: %s\n", strings.Join(summary, ", "))
}
