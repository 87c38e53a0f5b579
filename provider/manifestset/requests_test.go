package manifestset_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// A plan asks the cluster about each member once, counted against the real
// server: a set's create is planned by one create-only dry run per object
// (it says whether the object exists and what its create stores), and a
// plan after a refresh takes the refresh's reads instead of reading every
// member again. Pulumi's Diff and Update plans share reads the same way.
// An object someone else made is still found, and refused naming them.
func TestAccManifestSet_asksEachMemberOncePerPlan(t *testing.T) {
	ns := acctest.Namespace(t)
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	names := []string{"one", "two", "three"}
	config := func(two string, extra ...string) string {
		docs := []string{configMap(ns, "one", "a"), configMap(ns, "two", two), configMap(ns, "three", "c")}
		return setConfig(t, "counted", yamlBody(append(docs, extra...)...), "wait = false")
	}
	requests := func() map[string][]string {
		out := map[string][]string{}
		for _, n := range names {
			for _, l := range acctest.RequestsTo(t, log, "configmaps", n) {
				method, _, _ := strings.Cut(l, " ")
				if strings.Contains(l, "dryRun") {
					method += " (dry run)"
				}
				out[n] = append(out[n], method)
			}
		}
		return out
	}
	wd := acctest.NewWorkdir(t)
	wd.Cleanup()
	plan := func() {
		t.Helper()
		acctest.ClearRequestLog(t, log)
		if r := wd.Run("plan", "-input=false", "-out=tfplan"); r.Err != nil {
			t.Fatalf("plan: %v\n%s", r.Err, r.Output)
		}
	}

	// Someone else made an object the set declares: found all the same.
	acctest.ApplyAs(t, "someone-else", configMaps, configMap(ns, "taken", "theirs"))
	wd.Write(config("b", configMap(ns, "taken", "ours")))
	r := wd.Plan()
	if r.Err == nil || !r.HasError("core/ConfigMap/"+ns+"/taken", "already exists and belongs to no set (made by someone-else)") {
		t.Fatalf("the plan should refuse the object someone else made, naming them:\n%s", r.Output)
	}

	wd.Write(config("b"))
	plan()
	for _, n := range names {
		if got := requests()[n]; strings.Join(got, ",") != "PATCH (dry run)" {
			t.Errorf("the create's plan sent %v for %s, want one create-only dry run", got, n)
		}
	}
	wd.MustApply()

	plan()
	for _, n := range names {
		if got := requests()[n]; strings.Join(got, ",") != "GET" {
			t.Errorf("a no-change plan (refresh, then plan) sent %v for %s, want the refresh's one read", got, n)
		}
	}

	// Someone edits two: the plan reads each once and dry-runs only two.
	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, "two", `{"data":{"greeting":"edited"}}`)
	plan()
	want := map[string]string{"one": "GET", "two": "GET,PATCH (dry run)", "three": "GET"}
	for _, n := range names {
		if got := requests()[n]; strings.Join(got, ",") != want[n] {
			t.Errorf("the plan after an edit of two sent %v for %s, want %s", got, n, want[n])
		}
	}
}
