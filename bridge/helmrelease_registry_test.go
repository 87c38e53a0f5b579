package bridge_test

import (
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A HelmRelease from an OCI registry without TLS, behind a password, under
// the real Pulumi engine: plainHttp reaches it, the chart's ConfigMap is in
// the cluster, chartVersion is the pushed one, and the registry's password is
// in no output and not in clear in the stack.
func TestPulumiHelmReleaseFromPlainHTTPRegistry(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	const user = "chart-reader"
	password := acctest.NewSecretValue("regpw")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{PlainHTTP: true, Username: user, Password: password.Plain})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0")))

	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-helm-plain-http", map[string]map[string]any{
		"app": {
			"clusterConnection":  map[string]any{"kubeconfigFile": kubeconfig},
			"name":               "plainreg",
			"namespace":          ns,
			"chart":              registry.Ref("charts", "app"),
			"version":            "1.0.0",
			"repositoryUsername": user,
			"repositoryPassword": password.Plain,
			"plainHttp":          true,
			"timeout":            "60s",
		},
	}, nil))
	up := s.Run(pulumitest.Up, nil, pulumitest.Flag("--diff"))
	expectChanges(t, up, map[string]int{"create": 2})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, password)
	if err := acctest.ConfigMapHas(t, ns, "plainreg-app", "greeting", "hello from app 1.0.0"); err != nil {
		t.Error(err)
	}
	exported := s.CLI("stack", "export")
	acctest.ExpectAbsent(t, "pulumi stack export", exported, password)
	acctest.ExpectPresent(t, "pulumi stack export", exported, `"chartVersion": "1.0.0"`)
}

// A HelmRelease with verify from an OCI registry behind a password, under the
// real Pulumi engine: the chart, pushed with its provenance layer as helm
// push --sign pushes it, is verified with the keyring that holds its
// signer's key and installs; the password is in no output.
func TestPulumiHelmReleaseVerifiesProvenance(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	const user = "chart-reader"
	password := acctest.NewSecretValue("provpw")
	signer := chartrepo.NewSigner(t, "chart-signer")
	registry := chartrepo.NewRegistry(t, chartrepo.Options{PlainHTTP: true, Username: user, Password: password.Plain})
	archive := chartrepo.MustPackage(t, chartrepo.Chart("app", "1.0.0"))
	registry.PushWithProvenance(t, "charts", archive, signer.Sign(t, archive))

	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-helm-verify", map[string]map[string]any{
		"app": {
			"clusterConnection":  map[string]any{"kubeconfigFile": kubeconfig},
			"name":               "signed",
			"namespace":          ns,
			"chart":              registry.Ref("charts", "app"),
			"version":            "1.0.0",
			"repositoryUsername": user,
			"repositoryPassword": password.Plain,
			"plainHttp":          true,
			"verify":             true,
			"keyring":            signer.Keyring,
			"timeout":            "60s",
		},
	}, nil))
	up := s.Run(pulumitest.Up, nil, pulumitest.Flag("--diff"))
	expectChanges(t, up, map[string]int{"create": 2})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, password)
	if err := acctest.ConfigMapHas(t, ns, "signed-app", "greeting", "hello from app 1.0.0"); err != nil {
		t.Error(err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"same": 2})
}

// A HelmRelease whose chart is the https:// URL of a packaged chart, behind
// TLS and a password, under the real Pulumi engine: it installs, and the URL
// republished with a new version is the next preview's update and up's
// upgrade (each plan asks the server whether the archive changed).
func TestPulumiHelmReleaseFromChartURL(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	const user = "chart-reader"
	password := acctest.NewSecretValue("urlpw")
	server := chartrepo.NewRepository(t, chartrepo.Options{TLS: true, Username: user, Password: password.Plain})
	publish := func(version string) {
		server.Serve("downloads/app.tgz", chartrepo.MustPackage(t, chartrepo.Chart("app", version)))
	}
	publish("1.0.0")

	s := pulumitest.NewYAMLProgram(t, releaseProgram(t, "k8sconnect-helm-chart-url", map[string]map[string]any{
		"app": {
			"clusterConnection":  map[string]any{"kubeconfigFile": kubeconfig},
			"name":               "fromurl",
			"namespace":          ns,
			"chart":              server.URL + "/downloads/app.tgz",
			"repositoryUsername": user,
			"repositoryPassword": password.Plain,
			"repositoryCaFile":   server.CAFile,
			"timeout":            "60s",
		},
	}, nil))
	// The plugin's chart cache is the test's own, so no other run's copy of
	// a URL on a reused port is found.
	s.SetEnv("K8SCONNECT_HELM_CACHE_DIR", t.TempDir())
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 2})
	if err := acctest.ConfigMapHas(t, ns, "fromurl-app", "greeting", "hello from app 1.0.0"); err != nil {
		t.Error(err)
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"same": 2})

	publish("1.1.0")
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"update": 1, "same": 1})
	up := s.Run(pulumitest.Up, nil, pulumitest.Flag("--diff"))
	expectChanges(t, up, map[string]int{"update": 1, "same": 1})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, password)
	if err := acctest.ConfigMapHas(t, ns, "fromurl-app", "greeting", "hello from app 1.1.0"); err != nil {
		t.Error(err)
	}
	acctest.ExpectAbsent(t, "pulumi stack export", s.CLI("stack", "export"), password)
}

// A HelmRelease of a chart on disk whose subcharts are in a
// password-protected HTTP repository and a password-protected OCI registry
// (behind a CA of its own), under the real Pulumi engine: without
// dependencyRepositories the preview fails naming the dependency and that
// property, as Pulumi spells it; with them the release installs, subcharts
// included, a second preview changes nothing, and the passwords are in no
// output and only encrypted in the stack.
func TestPulumiHelmReleaseDependencyCredentials(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	const repoUser, registryUser = "repo-reader", "registry-reader"
	repoPassword, registryPassword := acctest.NewSecretValue("deprepopw"), acctest.NewSecretValue("depregpw")
	repo := chartrepo.NewRepository(t, chartrepo.Options{Username: repoUser, Password: repoPassword.Plain})
	repo.Add(t, chartrepo.MustPackage(t, chartrepo.Chart("child", "1.0.0")))
	registry := chartrepo.NewRegistry(t, chartrepo.Options{Username: registryUser, Password: registryPassword.Plain})
	registry.Push(t, "charts", chartrepo.MustPackage(t, chartrepo.Chart("ocichild", "0.1.0")))
	dir, err := chartrepo.WriteDir(chartrepo.Chart("parent", "0.1.0",
		&chart.Dependency{Name: "child", Version: "1.0.0", Repository: repo.URL},
		&chart.Dependency{Name: "ocichild", Version: "0.1.0", Repository: "oci://" + registry.Host + "/charts"}), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	program := func(entries []any) string {
		props := map[string]any{
			"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
			"name":              "deps",
			"namespace":         ns,
			"chart":             dir,
			"timeout":           "60s",
		}
		if entries != nil {
			props["dependencyRepositories"] = entries
		}
		return releaseProgram(t, "k8sconnect-helm-dependency-credentials", map[string]map[string]any{"app": props}, nil)
	}

	s := pulumitest.NewYAMLProgram(t, program(nil))
	// The plugin's chart cache is the test's own, so no other run's copy of
	// a dependency is found.
	s.SetEnv("K8SCONNECT_HELM_CACHE_DIR", t.TempDir())
	refused, err := s.Try(pulumitest.Preview, nil)
	if err == nil {
		t.Fatalf("the preview without the dependencies' credentials succeeded:\n%s", refused.Log)
	}
	for _, want := range []string{`dependency "child"`, repo.URL + "/index.yaml", "requires credentials", "in dependencyRepositories"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refused preview does not say %q:\n%v", want, err)
		}
	}

	s.WriteYAML(program([]any{
		map[string]any{"url": repo.URL, "username": repoUser, "password": repoPassword.Plain},
		map[string]any{"url": "oci://" + registry.Host, "username": registryUser, "password": registryPassword.Plain, "caFile": registry.CAFile},
	}))
	diff := pulumitest.Flag("--diff")
	preview := s.Run(pulumitest.Preview, nil, diff)
	acctest.ExpectAbsent(t, "pulumi preview --diff", preview.Log, repoPassword, registryPassword)
	up := s.Run(pulumitest.Up, nil, diff)
	expectChanges(t, up, map[string]int{"create": 2})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, repoPassword, registryPassword)
	for name, greeting := range map[string]string{"deps-parent": "hello from parent 0.1.0", "deps-child": "hello from child 1.0.0",
		"deps-ocichild": "hello from ocichild 0.1.0"} {
		if err := acctest.ConfigMapHas(t, ns, name, "greeting", greeting); err != nil {
			t.Error(err)
		}
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"same": 2})

	exported := s.CLI("stack", "export")
	acctest.ExpectAbsent(t, "pulumi stack export", exported, repoPassword, registryPassword)
	acctest.ExpectPresent(t, "pulumi stack export", exported, "ciphertext")
	revealed := s.CLI("stack", "export", "--show-secrets")
	acctest.ExpectPresent(t, "the decrypted stack", revealed, repoPassword.Plain)
	acctest.ExpectPresent(t, "the decrypted stack", revealed, registryPassword.Plain)
}
