package bridge_test

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// getHelmTemplate under the real Pulumi engine: the chart of the Terraform
// tests renders against the cluster, every object is created as a
// KubernetesObject of its own, and the next preview changes nothing (lookup
// reads the chart's generated password back). The setSensitive value and
// the generated password reach the cluster and nothing a user reads: the
// preview and up output with --diff, the stack export, its outputs.
func TestPulumiHelmTemplate(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Name("pulumihelm")
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	greeting := acctest.NewSecretValue("greet")
	stack := pulumitest.NewScenario(t, pulumitest.TypeScript, "helm-template")
	diff := pulumitest.Flag("--diff")
	cfg := pulumitest.Config{
		"kubeconfigPath": pulumitest.Plain(cluster.KubeconfigPath),
		"context":        pulumitest.Plain(localcluster.TokenContext),
		"namespace":      pulumitest.Plain(ns),
		"chart":          pulumitest.Plain(filepath.Join(repo, "provider", "helmtemplate", "testdata", "charts", "shop")),
		"greeting":       pulumitest.Plain(greeting.Plain),
	}

	res := stack.Run(pulumitest.Up, cfg, diff)
	// Namespace, CRD, ClusterRole, Deployment, Shelf, ConfigMap, Secret, the stack.
	expectChanges(t, res, map[string]int{"create": 8})
	if res.Outputs["chartVersion"] != "1.2.3" {
		t.Errorf("output chartVersion = %v, want 1.2.3", res.Outputs["chartVersion"])
	}
	if hooks, _ := res.Outputs["hooks"].([]any); !slices.Equal(hooks, []any{"batch/Job/" + ns + "/web-shop-migrate"}) {
		t.Errorf("output hooks = %v, want the migrate Job alone", res.Outputs["hooks"])
	}
	if err := acctest.ConfigMapHas(t, ns, "web-shop", "greeting", greeting.Plain); err != nil {
		t.Fatalf("the setSensitive value did not reach the cluster: %v", err)
	}
	generated := acctest.MustGet(t, secSecrets, ns, "web-shop-auth")
	password := acctest.SecretValue{Plain: decodeSecretKey(t, generated, "password")}
	uid := generated.GetUID()
	acctest.ExpectAbsent(t, "pulumi up --diff", res.Log, greeting, password)

	preview := stack.Run(pulumitest.Preview, nil, diff)
	expectChanges(t, preview, map[string]int{"same": 8})
	acctest.ExpectAbsent(t, "pulumi preview --diff", preview.Log, greeting, password)

	exported := stack.CLI("stack", "export")
	acctest.ExpectPresent(t, "the decrypted stack", stack.CLI("stack", "export", "--show-secrets"), greeting.Plain)
	acctest.ExpectAbsent(t, "pulumi stack export", exported, greeting, password)
	acctest.ExpectAbsent(t, "pulumi stack output", stack.CLI("stack", "output", "--json"), greeting, password)
	if after := acctest.MustGet(t, secSecrets, ns, "web-shop-auth"); after.GetUID() != uid {
		t.Errorf("the chart's Secret was replaced: uid %s -> %s", uid, after.GetUID())
	}

	res = stack.Run(pulumitest.Destroy, nil)
	expectChanges(t, res, map[string]int{"delete": 8})
}

func decodeSecretKey(t *testing.T, s *unstructured.Unstructured, key string) string {
	t.Helper()
	b64, _, _ := unstructured.NestedString(s.Object, "data", key)
	plain, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(plain) == 0 {
		t.Fatalf("secret %s data.%s: %v", s.GetName(), key, err)
	}
	return string(plain)
}
