package helmrelease_test

import (
	"fmt"
	"path/filepath"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// Two local charts whose dependencies are not in their charts/ directory:
// one's in an HTTP repository behind a password, the other's in an OCI
// registry behind another, with a CA of its own. Without credentials for
// them the plan fails, naming the dependency, the URL and
// dependency_repositories, and nothing is installed; with them both install,
// the subcharts' objects with them. A rotated password is refused naming the
// entry, and once updated applies without a new release revision. The
// passwords are in no plan or apply output, nor in the provider's lines of
// the TF_LOG file, and the engine keeps them as sensitive.
func TestAccHelmReleaseDependencyCredentials(t *testing.T) {
	ns := acctest.Namespace(t)
	const repoUser, registryUser = "repo-reader", "registry-reader"
	repoPassword, rotated := acctest.NewSecretValue("deprepopw"), acctest.NewSecretValue("deprotated")
	registryPassword := acctest.NewSecretValue("depregpw")
	all := []acctest.SecretValue{repoPassword, rotated, registryPassword}

	protected := chartrepo.NewProtectedDependency(t, "withhttp", repoUser, repoPassword.Plain)
	repo, httpChart := protected.Repository, protected.ChartDir
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: registryUser, Password: registryPassword.Plain})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", "0.1.0")))
	ociChart := chartrepo.LocalChart(t, "withoci", &chart.Dependency{Name: "ocichild", Version: "0.1.0", Repository: "oci://" + registry.Host + "/charts"})

	w := acctest.NewWorkdir(t)
	// The provider's chart cache is the test's own, so the first plan
	// cannot find the dependencies downloaded by another test.
	w.SetEnv(helmchart.CacheDirEnv, t.TempDir())
	logPath := filepath.Join(t.TempDir(), "debug.log")
	w.SetEnv("TF_LOG", "DEBUG")
	w.SetEnv("TF_LOG_PATH", logPath)
	w.SetEnv("TF_VAR_repo_password", repoPassword.Plain)
	// The repository's password comes from a sensitive variable, as it
	// would in real use (the engine quotes the configuration's source in
	// diagnostics); the registry's is written in the configuration, so that
	// only the attribute's own sensitivity hides it.
	config := func(withCredentials bool) string {
		httpEntries, ociEntry := "", fmt.Sprintf(`{ url = "oci://%s", ca_file = %q }`, registry.Host, registry.CAFile)
		if withCredentials {
			httpEntries = fmt.Sprintf(`dependency_repositories = [{ url = %q, username = %q, password = var.repo_password }]`, repo.URL, repoUser)
			ociEntry = fmt.Sprintf(`{ url = "oci://%s", username = %q, password = %q, ca_file = %q }`,
				registry.Host, registryUser, registryPassword.Plain, registry.CAFile)
		}
		return fmt.Sprintf(`
variable "repo_password" {
  type      = string
  sensitive = true
}
resource "k8sconnect_helm_release" "http" {
  name      = "dephttp"
  namespace = %[1]q
  chart     = %[2]q
  timeout   = "60s"
  %[4]s
  %[6]s
}
resource "k8sconnect_helm_release" "oci" {
  name                    = "depoci"
  namespace               = %[1]q
  chart                   = %[3]q
  timeout                 = "60s"
  dependency_repositories = [%[5]s]
  %[6]s
}
`, ns, httpChart, ociChart, httpEntries, ociEntry, acctest.Connection(t))
	}

	w.Write(config(false))
	w.Cleanup()
	r := w.Apply()
	w.MustFail(r, "apply without the dependencies' credentials")
	if !r.HasError("Chart not loaded", `dependency "child"`, repo.URL+"/index.yaml", "requires credentials",
		"set a username and password for it in dependency_repositories, in an entry whose url is "+repo.URL) {
		t.Errorf("the HTTP dependency's 401 should name it, its URL and dependency_repositories:\n%s", r.Output)
	}
	if !r.HasError("Chart not loaded", `dependency "ocichild"`, "oci://"+registry.Host+"/charts/ocichild", "requires credentials",
		`set a username and password in the dependency_repositories entry "oci://`+registry.Host+`"`) {
		t.Errorf("the OCI dependency's 401 should name it, its URL and its dependency_repositories entry:\n%s", r.Output)
	}
	acctest.ExpectAbsent(t, "the failed apply's output", r.Output, all...)
	for _, name := range []string{"dephttp", "depoci"} {
		if err := records(t, ns, name, map[string]string{})(); err != nil {
			t.Errorf("the failed plan installed something: %v", err)
		}
	}

	w.Write(config(true))
	plan := w.Human("plan")
	acctest.ExpectPresent(t, "plan output", plan.Output, repo.URL)
	acctest.ExpectAbsent(t, "plan output", plan.Output, all...)
	apply := w.Human("apply", "-auto-approve")
	acctest.ExpectAbsent(t, "apply output", apply.Output, all...)
	for _, c := range []acctest.ClusterCheck{
		configMapData(t, ns, "dephttp-withhttp", "greeting", "hello from withhttp 0.1.0"),
		configMapData(t, ns, "dephttp-child", "greeting", "hello from child 1.0.0"),
		configMapData(t, ns, "depoci-ocichild", "greeting", "hello from ocichild 0.1.0"),
		records(t, ns, "dephttp", map[string]string{"v1": "deployed"}),
		records(t, ns, "depoci", map[string]string{"v1": "deployed"}),
	} {
		if err := c(); err != nil {
			t.Error(err)
		}
	}
	w.ExpectSensitiveEntries("dependency_repositories", "password", 2)

	// The repository's password is rotated: the old one is refused, naming
	// the entry it comes from; the new one applies as an update of the
	// configuration alone, with no new revision.
	repo.SetPassword(rotated.Plain)
	r = w.Plan()
	w.MustFail(r, "plan with a rotated password")
	if !r.HasError(`dependency "child"`, "refused the credentials",
		`check the username and password of the dependency_repositories entry "`+repo.URL+`"`) {
		t.Errorf("the refused password should name its dependency_repositories entry:\n%s", r.Output)
	}
	w.SetEnv("TF_VAR_repo_password", rotated.Plain)
	apply = w.Human("apply", "-auto-approve")
	acctest.ExpectAbsent(t, "apply output after the rotation", apply.Output, all...)
	if err := records(t, ns, "dephttp", map[string]string{"v1": "deployed"})(); err != nil {
		t.Errorf("a rotated dependency password alone wrote a revision: %v", err)
	}
	w.MustPlanNoChanges()

	logs := acctest.ExpectAbsentFromProviderLog(t, logPath, all...)
	acctest.ExpectAbsent(t, "the DEBUG log", logs, all...)
}
