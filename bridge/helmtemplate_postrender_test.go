package bridge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// getHelmTemplate's postrender under the real Pulumi engine, with a
// careless program: it fails after printing everything it was given, the
// chart's Secret and a ConfigMap holding the setSensitive value
// base64-encoded among it. The preview fails naming the program and what it
// said, and the value is in no form in its output, though Pulumi prints a
// failed invocation's error itself. A program that works hands out what it
// returned, under the same engine.
func TestPulumiHelmTemplatePostrender(t *testing.T) {
	skipShort(t)
	t.Parallel()
	kubeconfig := localcluster.Shared(t).KubeconfigPath
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pw := acctest.NewSecretValue("pulpw")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	failing := write("failing", "cat >&2\necho 'kaboom: the post-renderer gave up' >&2\nexit 3\n")
	good := write("good", "sed 's/greeting: hello/greeting: post-rendered/'\n")
	program := func(binary string) string {
		t.Helper()
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-helm-template-postrender", "runtime": "yaml",
			// As a user keeps a password: a secret of the stack's config, so
			// that Pulumi YAML's own quotes of the program show no value.
			"config": map[string]any{"password": map[string]any{"type": "string", "secret": true}},
			"variables": map[string]any{"tpl": map[string]any{"fn::invoke": map[string]any{
				"function": "k8sconnect:getHelmTemplate",
				"arguments": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig},
					"name":              "pr",
					"namespace":         "apps",
					"chart":             filepath.Join(repo, "provider", "helmtemplate", "testdata", "charts", "lenient"),
					"setSensitive":      []any{map[string]any{"name": "password", "value": "${password}"}},
					"postrender":        map[string]any{"binaryPath": binary},
				},
			}}},
			"outputs": map[string]any{"settings": "${tpl.namespaced[\"core/ConfigMap/apps/pr-settings\"]}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	config := pulumitest.Config{"password": pulumitest.Secret(pw.Plain)}
	s := pulumitest.NewYAMLProgram(t, program(failing))
	failed, err := s.Try(pulumitest.Preview, config)
	if err == nil {
		t.Fatalf("the preview with a failing post-renderer succeeded:\n%s", failed.Log)
	}
	log := flat(failed.Log)
	if !strings.Contains(log, "exited with code 3") || !strings.Contains(log, "kaboom: the post-renderer gave up") ||
		!strings.Contains(log, "kind: Secret") {
		t.Errorf("the preview should fail naming the program and showing what it said:\n%s", failed.Log)
	}
	acctest.ExpectAbsent(t, "the failed preview", failed.Log, pw)

	s.WriteYAML(program(good))
	up := s.Run(pulumitest.Up, config)
	if got, _ := up.Outputs["settings"].(string); !strings.Contains(got, `"greeting":"post-rendered"`) {
		t.Errorf("the namespaced map should hold what the post-renderer returned: %q", got)
	}
	acctest.ExpectAbsent(t, "the up", up.Log, pw)
	acctest.ExpectAbsent(t, "the stack export", s.CLI("stack", "export"), pw)
}
