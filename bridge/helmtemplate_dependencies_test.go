package bridge_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/chartrepo"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// getHelmTemplate of a chart on disk whose subchart is in a
// password-protected repository (the fixture of the Terraform tests), under
// the real Pulumi engine: without dependencyRepositories the preview fails
// naming the dependency and that property, as Pulumi spells it; with it the
// subchart's ConfigMap is in namespaced, under its key, and is created as a
// KubernetesObject; a second preview changes nothing, and the password is in
// no output nor in the stack.
func TestPulumiHelmTemplateDependencyCredentials(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig, ns := localcluster.Shared(t).KubeconfigPath, acctest.Namespace(t)
	const user = "tpl-reader"
	password := acctest.NewSecretValue("tpldeppw")
	dep := chartrepo.NewProtectedDependency(t, "withdep", user, password.Plain)
	repo := dep.Repository

	program := func(entries []any) string {
		t.Helper()
		conn := map[string]any{"kubeconfigFile": kubeconfig}
		args := map[string]any{"clusterConnection": conn, "name": "tpldep", "namespace": ns, "chart": dep.ChartDir}
		if entries != nil {
			args["dependencyRepositories"] = entries
		}
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-helm-template-dependency-credentials", "runtime": "yaml",
			"variables": map[string]any{
				"tpl": map[string]any{"fn::invoke": map[string]any{"function": "k8sconnect:getHelmTemplate", "arguments": args}},
			},
			"resources": map[string]any{
				"child": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
					"clusterConnection": conn,
					"yamlBody":          `${tpl.namespaced["core/ConfigMap/` + ns + `/tpldep-child"]}`,
				}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	s := pulumitest.NewYAMLProgram(t, program(nil))
	// The plugin's chart cache is the test's own, so no other run's copy of
	// the subchart is found.
	s.SetEnv("K8SCONNECT_HELM_CACHE_DIR", t.TempDir())
	refused, err := s.Try(pulumitest.Preview, nil)
	if err == nil {
		t.Fatalf("the preview without the dependency's credentials succeeded:\n%s", refused.Log)
	}
	for _, want := range []string{`dependency "child"`, repo.URL + "/index.yaml", "requires credentials", "in dependencyRepositories"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refused preview does not say %q:\n%v", want, err)
		}
	}

	s.WriteYAML(program([]any{map[string]any{"url": repo.URL, "username": user, "password": password.Plain}}))
	diff := pulumitest.Flag("--diff")
	preview := s.Run(pulumitest.Preview, nil, diff)
	acctest.ExpectAbsent(t, "pulumi preview --diff", preview.Log, password)
	up := s.Run(pulumitest.Up, nil, diff)
	expectChanges(t, up, map[string]int{"create": 2})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, password)
	if err := acctest.ConfigMapHas(t, ns, "tpldep-child", "greeting", "hello from child 1.0.0"); err != nil {
		t.Error(err)
	}
	if chartrepo.Authorized(repo.Requests()) == 0 {
		t.Error("the repository got no request with credentials: the entry was not used")
	}
	expectChanges(t, s.Run(pulumitest.Preview, nil), map[string]int{"same": 2})
	acctest.ExpectAbsent(t, "pulumi stack export", s.CLI("stack", "export"), password)
}
