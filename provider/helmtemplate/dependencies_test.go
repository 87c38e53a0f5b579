package helmtemplate_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
