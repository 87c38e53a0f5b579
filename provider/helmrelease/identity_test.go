package helmrelease_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
)

// A release installed by a namespace-bound ServiceAccount (403 on
// kube-system) records the CA of the TLS handshake as its cluster. A
// kubeconfig switched to a second cluster, where the release's records do
// not exist, is refused: before, the refresh found no records, dropped the
// release from state and planned an install there. A state written before
// the release recorded any identity plans no change, and its next refresh
// records it.
func TestAccHelmReleaseIdentityWithANamespaceAccount(t *testing.T) {
	t.Parallel()
	ns := acctest.Namespace(t)
	rules := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	clusters := acctest.TwoClusterKubeconfig(t, ns, rules)
	first, second := clusters.First, clusters.Second
	chart := chartPath(t, "one-configmap")
	config := func(context string) string {
		return fmt.Sprintf(`
resource "k8sconnect_helm_release" "app" {
  name      = "ci"
  namespace = %q
  chart     = %q
  timeout   = "60s"
  cluster_connection = {
    kubeconfig_file = %q
    context         = %q
  }
}
`, ns, chart, clusters.Kubeconfig, context)
	}
	w := acctest.NewWorkdir(t)
	w.Write(config("first"))
	w.Cleanup()
	w.MustApply()
	firstCA, secondCA := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	if got := w.StateAttribute("k8sconnect_helm_release.app", "cluster_uid"); got != "tls-ca-sha256:"+firstCA {
		t.Fatalf("cluster_uid = %q, want the first cluster's CA tls-ca-sha256:%s", got, firstCA)
	}

	w.Write(config("second"))
	r := w.Plan()
	w.MustFail(r, "plan after switching the context to the second cluster")
	if !r.HasError("different cluster", firstCA, secondCA) {
		t.Fatalf("the error does not name both CAs (%s, %s): %+v", firstCA, secondCA, r.Errors())
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("state lost the release: %q", got)
	}
	inSecond, err := kubernetes.NewForConfigOrDie(second.RESTConfig()).CoreV1().Secrets(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(inSecond.Items) != 0 {
		t.Fatalf("release records in the second cluster: %v (err %v)", len(inSecond.Items), err)
	}
	for _, token := range []string{clusters.FirstToken, clusters.SecondToken} {
		if strings.Contains(r.Output, token) {
			t.Fatal("the plan's output holds a ServiceAccount token")
		}
	}
	w.Write(config("first"))
	w.MustPlanNoChanges()

	// The state as the previous version wrote it: no cluster_uid at all.
	stripStateAttribute(t, filepath.Join(w.Dir(), "terraform.tfstate"), "cluster_uid")
	if got := w.StateAttribute("k8sconnect_helm_release.app", "cluster_uid"); got != "" && got != "null" {
		t.Fatalf("the state still has cluster_uid %q", got)
	}
	w.MustPlanNoChanges()
	if r := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json"); r.Err != nil {
		t.Fatalf("apply -refresh-only: %v\n%s", r.Err, r.Output)
	}
	if got := w.StateAttribute("k8sconnect_helm_release.app", "cluster_uid"); got != "tls-ca-sha256:"+firstCA {
		t.Fatalf("after a refresh cluster_uid = %q, want tls-ca-sha256:%s", got, firstCA)
	}
}

// stripStateAttribute removes attribute from every resource instance of a
// terraform.tfstate file (format 4, as Terraform and OpenTofu write it).
func stripStateAttribute(t *testing.T, path, attribute string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	for _, res := range state["resources"].([]any) {
		for _, inst := range res.(map[string]any)["instances"].([]any) {
			delete(inst.(map[string]any)["attributes"].(map[string]any), attribute)
		}
	}
	state["serial"] = state["serial"].(float64) + 1
	out, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}
