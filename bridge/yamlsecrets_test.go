package bridge_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A bundle file that holds a Secret in clear, as vendors ship them, read by
// getYamlSplit and getYamlScoped, in the two ways the secrets guide gives
// for Pulumi, whose functions return no field as a secret (the bridge hands
// an invoke's result back plain, pulumi/pulumi#12710):
//   - the file as it is (readFile, not a secret to the engine), the Secret
//     applied from the sensitive map with yamlBodyWo and the ConfigMap from
//     the plain map: the cluster gets the value, and no preview, up, export
//     or output holds it;
//   - the file made secret (fn::secret): the engine marks each function's
//     whole result secret, so even the sensitive maps exported as stack
//     outputs are encrypted, and revealed only with --show-secrets (which
//     proves the searches are not blind).
func TestPulumiSecrets_yamlDataSources(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	password := acctest.NewSecretValue("dspw")
	all := []acctest.SecretValue{password, {Plain: cluster.Token}}

	bundle := filepath.Join(t.TempDir(), "bundle.yaml")
	if err := os.WriteFile(bundle, []byte(fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %[1]s}\ndata: {mode: fast}\n---\n"+
			"apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %[1]s}\ntype: Opaque\nstringData: {password: %[2]s}\n",
		ns, password.Plain)), 0o600); err != nil {
		t.Fatal(err)
	}
	secretKey, configKey := "core/Secret/"+ns+"/db", "core/ConfigMap/"+ns+"/settings"
	program := func(secretFile bool) string {
		t.Helper()
		var content any = map[string]any{"fn::readFile": bundle}
		outputs := map[string]any{
			"splitManifests": "${split.manifests}", "splitKeys": "${split.sensitiveKeys}",
			"namespaced": "${scoped.namespaced}", "scopedKeys": "${scoped.sensitiveKeys}",
		}
		if secretFile {
			content = map[string]any{"fn::secret": content}
			outputs["splitSensitive"], outputs["scopedSensitive"] = "${split.sensitive}", "${scoped.sensitive}"
		}
		invoke := func(function string) map[string]any {
			return map[string]any{"fn::invoke": map[string]any{
				"function":  "k8sconnect:index/" + function + ":" + function,
				"arguments": map[string]any{"content": content},
			}}
		}
		p, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-yaml-secrets", "runtime": "yaml",
			"variables": map[string]any{"split": invoke("getYamlSplit"), "scoped": invoke("getYamlScoped")},
			"resources": map[string]any{
				"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
					"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
				"settings": map[string]any{"type": "k8sconnect:KubernetesObject", "options": map[string]any{"provider": "${k8s}"},
					"properties": map[string]any{"yamlBody": fmt.Sprintf("${split.manifests[%q]}", configKey)}},
				"db": map[string]any{"type": "k8sconnect:KubernetesObject", "options": map[string]any{"provider": "${k8s}"},
					"properties": map[string]any{
						"yamlBodyWo":         fmt.Sprintf("${scoped.sensitive[%q]}", secretKey),
						"yamlBodyWoRevision": 1,
					}},
			},
			"outputs": outputs,
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	s := pulumitest.NewYAMLProgram(t, program(false))
	diff := pulumitest.Flag("--diff")
	clean := func(when string) {
		t.Helper()
		acctest.ExpectAbsent(t, "pulumi stack export "+when, s.CLI("stack", "export"), all...)
		acctest.ExpectAbsent(t, "pulumi stack output "+when, s.CLI("stack", "output", "--json"), all...)
	}

	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, all...)
	up := s.Run(pulumitest.Up, nil, diff)
	expectChanges(t, up, map[string]int{"create": 4}) // the stack, the provider, two objects
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, all...)
	acctest.MustGet(t, secConfigMaps, ns, "settings")
	live := acctest.MustGet(t, secSecrets, ns, "db")
	if got, _ := live.Object["data"].(map[string]any)["password"].(string); got != password.Base64() {
		t.Errorf("the Secret in the cluster has password %q, want the file's value", got)
	}
	clean("of the file as it is")
	// The plain maps are usable and in the clear; only the Secret left them.
	for _, output := range []string{"splitKeys", "scopedKeys"} {
		if got := s.CLI("stack", "output", output, "--json"); !strings.Contains(got, secretKey) {
			t.Errorf("output %s = %s, want the Secret's key %s in the clear", output, got, secretKey)
		}
	}
	for _, output := range []string{"splitManifests", "namespaced"} {
		got := s.CLI("stack", "output", output, "--json")
		if !strings.Contains(got, configKey) || strings.Contains(got, secretKey) {
			t.Errorf("output %s should hold the ConfigMap's key %s and not the Secret's: %s", output, configKey, got)
		}
	}

	// The file made secret: the sensitive maps themselves can be exported.
	s.WriteYAML(program(true))
	up = s.Run(pulumitest.Up, nil, diff)
	acctest.ExpectAbsent(t, "pulumi up --diff of the secret file", up.Log, all...)
	clean("of the secret file")
	acctest.ExpectPresent(t, "pulumi stack output --show-secrets", s.CLI("stack", "output", "--json", "--show-secrets"), password.Plain)
}
