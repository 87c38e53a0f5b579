package helmrelease_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// An upgrade's plan dry-runs only the objects whose rendering it changes
// (ADR 0013, item 14), counted against the real server: a changed value
// dry-runs the one ConfigMap that holds it and the one that writes
// .Release.Revision (whose body the new revision changes), not the one the
// values do not reach. An object someone edited since the last apply is
// dry-run whatever the values do, so the plan shows the edit going back.
func TestAccHelmReleaseUpgradeDryRunsOnlyWhatChanges(t *testing.T) {
	ns := acctest.Namespace(t)
	name := "counted"
	chart := chartPath(t, "counted")
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	config := func(greeting string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = %q
  namespace = %q
  chart     = %q
  wait      = false
  set       = [{ name = "greeting", value = %q }]
  %s
}
`, name, ns, chart, greeting, acctest.Connection(t))
	}
	w := acctest.NewWorkdir(t)
	w.Write(config("hello"))
	w.MustApply()
	w.Cleanup()

	// planOf plans greeting and returns, per ConfigMap, the dry runs the plan
	// sent and whether the plan changes its projection.
	planOf := func(greeting string) (dryRuns map[string]int, changed []string) {
		t.Helper()
		w.Write(config(greeting))
		acctest.ClearRequestLog(t, log)
		if r := w.Run("plan", "-input=false", "-out=tfplan"); r.Err != nil {
			t.Fatalf("plan: %v\n%s", r.Err, r.Output)
		}
		dryRuns = map[string]int{}
		for _, cm := range []string{"greeting", "steady", "revision"} {
			for _, l := range acctest.RequestsTo(t, log, "configmaps", name+"-"+cm) {
				if strings.Contains(l, "dryRun") {
					dryRuns[cm]++
				}
			}
		}
		return dryRuns, changedObjects(t, w)
	}

	dryRuns, changed := planOf("bonjour")
	want := map[string]int{"greeting": 1, "revision": 1}
	if fmt.Sprint(dryRuns) != fmt.Sprint(want) {
		t.Errorf("an upgrade of greeting dry-ran %v, want %v: steady renders as the last apply did and nobody touched it", dryRuns, want)
	}
	wantChanged := []string{"core/ConfigMap/" + ns + "/" + name + "-greeting", "core/ConfigMap/" + ns + "/" + name + "-revision"}
	if !slices.Equal(changed, wantChanged) {
		t.Errorf("the plan changes %v, want %v", changed, wantChanged)
	}

	// Someone edits steady: the same upgrade now dry-runs it as well, and the
	// plan takes the edit back.
	acctest.PatchAs(t, "kubectl-edit", configMaps, ns, name+"-steady", `{"data":{"note":"edited"}}`)
	dryRuns, changed = planOf("bonjour")
	want = map[string]int{"greeting": 1, "revision": 1, "steady": 1}
	if fmt.Sprint(dryRuns) != fmt.Sprint(want) {
		t.Errorf("after an edit of steady the upgrade dry-ran %v, want %v", dryRuns, want)
	}
	wantChanged = []string{"core/ConfigMap/" + ns + "/" + name + "-greeting", "core/ConfigMap/" + ns + "/" + name + "-revision",
		"core/ConfigMap/" + ns + "/" + name + "-steady"}
	if !slices.Equal(changed, wantChanged) {
		t.Errorf("after an edit of steady the plan changes %v, want %v", changed, wantChanged)
	}

	w.MustApply()
	for _, c := range []acctest.ClusterCheck{
		configMapData(t, ns, name+"-greeting", "greeting", "bonjour"),
		configMapData(t, ns, name+"-steady", "note", "steady"),
		configMapData(t, ns, name+"-revision", "revision", "2"),
	} {
		if err := c(); err != nil {
			t.Error(err)
		}
	}
	w.MustPlanNoChanges()
}

// changedObjects returns, sorted, the keys of objects whose projection the
// saved plan tfplan in w changes.
func changedObjects(t *testing.T, w *acctest.Workdir) []string {
	t.Helper()
	r := w.Run("show", "-json", "tfplan")
	if r.Err != nil {
		t.Fatalf("show: %v\n%s", r.Err, r.Output)
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Before map[string]json.RawMessage `json:"before"`
				After  map[string]json.RawMessage `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(r.Output), &plan); err != nil {
		t.Fatalf("show -json: %v\n%.2000s", err, r.Output)
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Address != "k8sconnect_helm_release.app" {
			continue
		}
		var before, after map[string]map[string]string
		if err := json.Unmarshal(rc.Change.Before["objects"], &before); err != nil {
			t.Fatalf("objects before: %v", err)
		}
		if err := json.Unmarshal(rc.Change.After["objects"], &after); err != nil {
			t.Fatalf("objects after: %v", err)
		}
		if len(before) != 3 || len(after) != 3 {
			t.Fatalf("objects: %d before, %d after, want 3 each: the comparison would see nothing", len(before), len(after))
		}
		var changed []string
		for key, obj := range after {
			if fmt.Sprint(obj) != fmt.Sprint(before[key]) {
				changed = append(changed, key)
			}
		}
		slices.Sort(changed)
		return changed
	}
	t.Fatalf("the plan has no change of k8sconnect_helm_release.app:\n%.2000s", r.Output)
	return nil
}
