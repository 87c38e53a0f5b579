package helmtemplate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// A local chart whose subchart is in a repository behind a password, read
// by the data source with a connection to the cluster (the fixture
// TestAccHelmReleaseDependencyCredentials uses). Without
// dependency_repositories the plan fails, naming the dependency, its URL and
// dependency_repositories, and nothing is applied; with an entry for the
// repository, the subchart's ConfigMap is in the namespaced map beside the
// chart's own and applies, and the next plan is empty. The password, written
// in the configuration so that only the attribute's sensitivity hides it, is
// in no plan or apply output (human or JSON), in the state only in the
// attribute that holds it by design (not elsewhere, not in private state),
// and not in the TF_LOG file; the engine keeps it as sensitive.
func TestAccHelmTemplateDependencyCredentials(t *testing.T) {
	ns := acctest.Namespace(t)
	const user = "tpl-reader"
	password := acctest.NewSecretValue("tpldeppw")
	dep := chartrepo.NewProtectedDependency(t, "withdep", user, password.Plain)
	repo := dep.Repository

	w := acctest.NewWorkdir(t)
	// The provider's chart cache is the test's own, so the first plan
	// cannot find the subchart downloaded by another test.
	w.SetEnv(helmchart.CacheDirEnv, t.TempDir())
	logPath := filepath.Join(t.TempDir(), "debug.log")
	w.SetEnv("TF_LOG", "DEBUG")
	w.SetEnv("TF_LOG_PATH", logPath)
	config := func(entries string) string {
		return fmt.Sprintf(`
data "k8sconnect_helm_template" "dep" {
  name      = "tpldep"
  namespace = %[1]q
  chart     = %[2]q
  %[3]s
  %[4]s
}

resource "k8sconnect_object" "namespaced" {
  for_each  = data.k8sconnect_helm_template.dep.namespaced
  yaml_body = each.value
  %[4]s
}
`, ns, dep.ChartDir, entries, acctest.Connection(t))
	}

	w.Write(config(""))
	w.Cleanup()
	r := w.Plan()
	w.MustFail(r, "plan without the dependency's credentials")
	if !r.HasError("Chart not loaded", `dependency "child"`, repo.URL+"/index.yaml", "requires credentials",
		"set a username and password for it in dependency_repositories, in an entry whose url is "+repo.URL) {
		t.Errorf("the dependency's 401 should name it, its URL and dependency_repositories:\n%s", r.Output)
	}
	if got := w.StateList(); len(got) != 0 {
		t.Errorf("the failed plan left %v in state", got)
	}
	if err := acctest.ConfigMapHas(t, ns, "tpldep-withdep", "greeting", "hello from withdep 0.1.0"); err == nil {
		t.Error("the failed plan applied the chart's ConfigMap")
	}

	w.Write(config(fmt.Sprintf(`dependency_repositories = [{ url = %q, username = %q, password = %q }]`,
		repo.URL+"/", user, password.Plain)))
	plan := w.Human("plan")
	acctest.ExpectPresent(t, "plan output", plan.Output, "tpldep-child")
	acctest.ExpectAbsent(t, "plan output", plan.Output, password)
	apply := w.Human("apply", "-auto-approve")
	acctest.ExpectAbsent(t, "apply output", apply.Output, password)

	var namespaced map[string]string
	if err := json.Unmarshal([]byte(w.StateAttribute("data.k8sconnect_helm_template.dep", "namespaced")), &namespaced); err != nil {
		t.Fatalf("the data source's namespaced map: %v", err)
	}
	for name, greeting := range map[string]string{"tpldep-child": "hello from child 1.0.0", "tpldep-withdep": "hello from withdep 0.1.0"} {
		found := false
		for key, body := range namespaced {
			if strings.HasSuffix(key, "/"+name) && strings.Contains(body, greeting) {
				found = true
			}
		}
		if !found {
			t.Errorf("namespaced has no ConfigMap %s saying %q: %v", name, greeting, namespaced)
		}
		if err := acctest.ConfigMapHas(t, ns, name, "greeting", greeting); err != nil {
			t.Error(err)
		}
	}

	w.ExpectSensitiveEntries("dependency_repositories", "password", 1)
	outside, holder, private := w.StateParts("dependency_repositories")
	acctest.ExpectPresent(t, "the attribute that holds it", holder, password.Plain)
	acctest.ExpectAbsent(t, "state outside it", outside, password)
	acctest.ExpectAbsent(t, "private state", private, password)
	if authorized := chartrepo.Authorized(repo.Requests()); authorized == 0 {
		t.Error("the repository got no request with credentials: the entry was not used")
	}

	w.MustPlanNoChanges()
	r = w.Plan()
	acctest.ExpectAbsent(t, "plan -json output", r.Output, password)

	logs := acctest.ExpectAbsentFromProviderLog(t, logPath, password)
	acctest.ExpectAbsent(t, "the DEBUG log", logs, password)
}

// dependency_update on the data source, as on the release: a local chart
// depends on child ^1.0.0, its charts/ empty, its Chart.lock pinning 1.0.0,
// and the repository has 1.0.0 and 1.1.0. Without it the lock's 1.0.0 is
// rendered, as helm dependency build fetches it; with it the newest the
// range allows, 1.1.0, as helm template --dependency-update resolves it.
// Nothing is written into the chart's directory.
func TestAccHelmTemplateDependencyUpdate(t *testing.T) {
	t.Setenv(helmchart.CacheDirEnv, t.TempDir())
	repo := chartrepo.NewRepository(t, chartrepo.Options{})
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("child", "1.0.0")))
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("child", "1.1.0")))
	dep := &chart.Dependency{Name: "child", Version: "^1.0.0", Repository: repo.URL}
	dir, err := chartrepo.WriteDir(chartrepo.Chart("parent", "0.1.0", dep), t.TempDir(),
		&chart.Lock{Dependencies: []*chart.Dependency{{Name: "child", Version: "1.0.0", Repository: repo.URL}}, Digest: "sha256:0"})
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewWorkdir(t)
	w.SetEnv(helmchart.CacheDirEnv, t.TempDir())
	greeting := func(more string) string {
		t.Helper()
		w.Write(fmt.Sprintf(`
data "k8sconnect_helm_template" "app" {
  name      = "depupdate"
  namespace = "apps"
  chart     = %q
  %s
  %s
}
`, dir, more, acctest.Connection(t)))
		w.MustApply()
		var cm struct{ Data map[string]string }
		if err := json.Unmarshal([]byte(stateMap[string](t, w, "namespaced")["core/ConfigMap/apps/depupdate-child"]), &cm); err != nil {
			t.Fatalf("the child's ConfigMap: %v", err)
		}
		return cm.Data["greeting"]
	}
	if got := greeting(""); got != "hello from child 1.0.0" {
		t.Errorf("without dependency_update the lock's version should render; greeting %q", got)
	}
	if got := greeting("dependency_update = true"); got != "hello from child 1.1.0" {
		t.Errorf("with dependency_update the newest in range should render; greeting %q", got)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "charts"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("the chart's charts/ directory was written to: %v", entries)
	}
}
