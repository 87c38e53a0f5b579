package helmrelease_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// A release into a namespace its apply makes (create_namespace) is planned
// with one read of that namespace and no dry run of its objects: the server
// holds a create in a namespace it lacks for 50 ms before it answers that
// the namespace does not exist, for each object of the chart. The objects are
// known after apply, as that answer made them before, and the apply makes
// them. An object the chart puts in another namespace the cluster lacks is
// refused at plan, naming that namespace: the apply makes only the
// release's, so it could not succeed.
func TestAccHelmReleaseIntoANewNamespace(t *testing.T) {
	ns, elsewhere := acctest.NamespaceToMake(t), acctest.Name("missing")
	cs := acctest.Clientset(t)
	name := "counted"
	chart := chartPath(t, "counted")
	log := filepath.Join(t.TempDir(), "requests.log")
	t.Setenv("K8SCONNECT_REQUEST_LOG", log)
	config := func(set string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name             = %q
  namespace        = %q
  create_namespace = true
  chart            = %q
  wait             = false
  set              = [{ name = "greeting", value = "hello" }%s]
  %s
}
`, name, ns, chart, set, acctest.Connection(t))
	}
	w := acctest.NewWorkdir(t)

	// An object in another namespace, which nothing makes: refused at plan.
	w.Write(config(fmt.Sprintf(`, { name = "elsewhere", value = %q }`, elsewhere)))
	r := w.Run("plan", "-input=false", "-no-color")
	w.MustFail(r, "plan of a chart with an object in a namespace nothing makes")
	for _, want := range []string{"Object of the chart not accepted", name + "-elsewhere", fmt.Sprintf("namespaces %q not found", elsewhere)} {
		if !strings.Contains(strings.Join(strings.Fields(r.Output), " "), want) { // as the engine wraps it
			t.Errorf("the plan's error does not say %q:\n%s", want, r.Output)
		}
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a refused plan made namespace %s (or it cannot be read: %v)", ns, err)
	}

	w.Write(config(""))
	acctest.ClearRequestLog(t, log)
	if r := w.Run("plan", "-input=false", "-out=tfplan"); r.Err != nil {
		t.Fatalf("plan: %v\n%s", r.Err, r.Output)
	}
	for _, cm := range []string{"greeting", "steady", "revision"} {
		if got := acctest.RequestsTo(t, log, "configmaps", name+"-"+cm); len(got) != 0 {
			t.Errorf("the plan sent %d requests for ConfigMap %s in namespace %s, which does not exist yet; want none:\n%s",
				len(got), cm, ns, strings.Join(got, "\n"))
		}
	}
	if got := acctest.RequestsTo(t, log, "namespaces", ns); len(got) != 1 || !strings.HasPrefix(got[0], "GET ") {
		t.Errorf("the plan asked of namespace %s: %q, want one read", ns, got)
	}
	w.Cleanup()
	if r := w.Run("apply", "-input=false", "tfplan"); r.Err != nil {
		t.Fatalf("apply of the saved plan: %v\n%s", r.Err, r.Output)
	}
	for _, cm := range []string{"greeting", "steady", "revision"} {
		acctest.MustGet(t, configMaps, ns, name+"-"+cm)
	}
	w.MustPlanNoChanges()
}
