package bridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A stack stores no encrypted nulls. The bridge keeps beside each resource's
// outputs a delta to rebuild Terraform's raw state, and an attribute missing
// from the outputs costs an encrypted entry there: a KubernetesObject with its
// own connection had some 25 (its unset options, and the unset connection
// fields twice over), half of what it took in the checkpoint. The outputs now
// carry those nulls, so an object with nothing secret stores no ciphertext,
// and the objects rebuilt from that state refresh, preview and update as
// before, a Wait reading the object's resourceRef included. (The Wait keeps
// two: its connection copy, sensitive in its schema, and its status, a value
// of any type, which the bridge's delta always encrypts.)
func TestPulumiState_nullsStoreNoCiphertext(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	program := func(mode string) string {
		t.Helper()
		b, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-nulls", "runtime": "yaml",
			"resources": map[string]any{
				"settings": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
					"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath},
					"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {mode: %s}\n", ns, mode),
				}},
				"mode": map[string]any{"type": "k8sconnect:Wait", "properties": map[string]any{
					"resourceRef": "${settings.resourceRef}", "waitFor": map[string]any{"field": "data.mode", "timeout": "30s"},
				}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	s := pulumitest.NewYAMLProgram(t, program("fast"))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"create": 3})

	if n, object := encryptedIn(t, s.CLI("stack", "export"), "settings"); n != 0 {
		t.Errorf("the state of an object with nothing secret holds %d encrypted values:\n%s", n, object)
	}
	expectChanges(t, s.Run(pulumitest.Refresh, nil), map[string]int{"same": 3})
	expectChanges(t, s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges), map[string]int{"same": 3})

	s.WriteYAML(program("slow"))
	expectChanges(t, s.Run(pulumitest.Up, nil), map[string]int{"same": 2, "update": 1})
	if err := acctest.ConfigMapHas(t, ns, "settings", "mode", "slow"); err != nil {
		t.Error(err)
	}
	if n, object := encryptedIn(t, s.CLI("stack", "export"), "settings"); n != 0 {
		t.Errorf("after an update the object's state holds %d encrypted values:\n%s", n, object)
	}
}

// encryptedIn counts the encrypted values in the state of the resource named
// name in a stack export, and returns that state.
func encryptedIn(t *testing.T, export, name string) (int, string) {
	t.Helper()
	var deployment struct {
		Deployment struct {
			Resources []json.RawMessage `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(export[strings.Index(export, "{"):]), &deployment); err != nil {
		t.Fatalf("stack export: %v\n%s", err, export)
	}
	for _, r := range deployment.Deployment.Resources {
		var head struct{ URN string }
		if err := json.Unmarshal(r, &head); err == nil && strings.HasSuffix(head.URN, "::"+name) {
			// The bridge marks a write-only attribute secret, so its output,
			// always null, is one ciphertext of its own: a fixed cost, and
			// not a null the provider could leave out.
			var res struct {
				Outputs map[string]json.RawMessage `json:"outputs"`
			}
			if err := json.Unmarshal(r, &res); err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(r), `"ciphertext"`)
			for _, wo := range []string{"yamlBodyWo", "patchWo", "mergePatchWo", "jsonPatchWo"} {
				n -= strings.Count(string(res.Outputs[wo]), `"ciphertext"`)
			}
			return n, string(r)
		}
	}
	t.Fatalf("no resource %s in the stack export:\n%s", name, export)
	return 0, ""
}
