package bridge_test

// Cluster identity as a Pulumi user with a namespace-bound ServiceAccount
// (a pipeline's) meets it. Run with:
// go test ./bridge -run TestPulumiIdentity -v

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// An account that gets 403 on kube-system creates an object, patches
// another and installs a release; each records the CA of the TLS handshake.
// The stack's kubeconfig context is switched to a second cluster where the
// same account exists: preview and up are refused naming both CAs, the
// stack keeps all three, and nothing reaches the second cluster. Switched
// back, a preview has nothing to do.
func TestPulumiIdentity_namespaceAccountSwitchedCluster(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns, clusters, name, target, chart := identityFixture(t, "ci-owned", "ci-patched")
	first, second := clusters.First, clusters.Second
	program := func(context string) string {
		conn := map[string]any{"kubeconfigFile": clusters.Kubeconfig, "context": context}
		return identityProgram(t, conn, ns, name, target, chart, "ci")
	}
	stack := pulumitest.NewYAMLProgram(t, program("first"))
	up := stack.Run(pulumitest.Up, nil)
	firstCA, secondCA := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	for _, out := range []string{"cm", "p", "app"} {
		if got := fmt.Sprint(up.Outputs[out]); got != "tls-ca-sha256:"+firstCA {
			t.Fatalf("%s.clusterUid = %q, want the first cluster's CA tls-ca-sha256:%s", out, got, firstCA)
		}
	}

	stack.WriteYAML(program("second"))
	// (pulumi refresh reads with the inputs in the stack, the first
	// context's, so it is not the step that meets the second cluster.)
	for _, op := range []pulumitest.Operation{pulumitest.Preview, pulumitest.Up} {
		res, refusal := stack.Try(op, nil)
		if refusal == nil || !strings.Contains(refusal.Error(), "different cluster") ||
			!strings.Contains(refusal.Error(), firstCA) || !strings.Contains(refusal.Error(), secondCA) {
			t.Fatalf("pulumi %s after switching the context: want a refusal naming both CAs, got %v\n%s", op, refusal, res.Log)
		}
		for _, token := range []string{clusters.FirstToken, clusters.SecondToken} {
			if strings.Contains(res.Log, token) || strings.Contains(refusal.Error(), token) {
				t.Fatalf("pulumi %s: the output holds a ServiceAccount token", op)
			}
		}
	}
	resources, _ := stack.Resources()
	kept := 0
	for _, r := range resources {
		if strings.HasPrefix(r, "k8sconnect:") {
			kept++
		}
	}
	if kept != 3 {
		t.Fatalf("the stack lost resources: %q", resources)
	}
	cs := kubernetes.NewForConfigOrDie(second.RESTConfig())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Fatal("the object was created in the second cluster")
	}
	if records, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"}); err != nil || len(records.Items) != 0 {
		t.Fatalf("release records in the second cluster (err %v)", err)
	}

	stack.WriteYAML(program("first"))
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 4})
}

// An account that may read neither kube-system nor kube-root-ca.crt, over an
// insecure connection: nothing names the cluster. The preview says so and
// what is lost, and the object is still created.
func TestPulumiIdentity_noIdentityWarns(t *testing.T) {
	skipShort(t)
	t.Parallel()
	c := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	token := acctest.NamespaceAccount(t, c, ns, "ci-secrets", rbacv1.PolicyRule{APIGroups: []string{""},
		Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
	b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-no-identity", "runtime": "yaml", "resources": map[string]any{
		"s": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
			"clusterConnection": map[string]any{"host": c.Host, "insecure": true, "token": map[string]any{"fn::secret": token}},
			"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\nstringData: {greeting: hello}\n", acctest.Name("s"), ns),
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stack := pulumitest.NewYAMLProgram(t, string(b))
	preview := stack.Run(pulumitest.Preview, nil)
	for _, want := range []string{"No cluster identity", "may not read namespace kube-system", "insecure", "not noticed"} {
		if !strings.Contains(preview.Log, want) {
			t.Fatalf("the preview should warn that no identity could be established (%q missing):\n%s", want, preview.Log)
		}
	}
	if strings.Contains(preview.Log, token) {
		t.Fatal("the preview's output holds the ServiceAccount token")
	}
	expectChanges(t, stack.Run(pulumitest.Up, nil), map[string]int{"create": 2})
}

// An object, a patch and a release made with the admin's credentials record
// kube-system's UID, and beside it (in private state) the CA of the
// handshake. The kubeconfig file then holds a namespace-bound account's
// token, as a pipeline's would: the preview confirms the cluster by that CA,
// without a warning, and changes nothing. Edited to reach a second cluster
// where the same account exists, preview and up are refused naming both CAs
// and the UID that could not be read, and nothing reaches the second
// cluster.
func TestPulumiIdentity_adminMadeStayCheckedUnderANamespaceAccount(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ns, clusters, name, target, chart := identityFixture(t, "admin-made", "admin-patched")
	first, second := clusters.First, clusters.Second
	kubeconfig := filepath.Join(t.TempDir(), "config")
	reach := func(c *localcluster.Cluster, token string) {
		acctest.WriteKubeconfig(t, kubeconfig, "ci", map[string]acctest.KubeContext{"ci": {Cluster: c, Token: token}})
	}
	program := identityProgram(t, map[string]any{"kubeconfigFile": kubeconfig}, ns, name, target, chart, "admin")
	reach(first, "") // the admin's
	stack := pulumitest.NewYAMLProgram(t, program)
	up := stack.Run(pulumitest.Up, nil)
	uid := acctest.KubeSystemUID(t, first)
	for _, out := range []string{"cm", "p", "app"} {
		if got := fmt.Sprint(up.Outputs[out]); got != uid {
			t.Fatalf("%s.clusterUid = %q, want kube-system's UID %s", out, got, uid)
		}
	}

	reach(first, clusters.FirstToken)
	preview := stack.Run(pulumitest.Preview, nil)
	expectChanges(t, preview, map[string]int{"same": 4})
	if strings.Contains(preview.Log, "could not be confirmed") || strings.Contains(preview.Log, "No cluster identity") {
		t.Fatalf("the account's connection verifies the CA recorded beside the UID, yet the preview warned:\n%s", preview.Log)
	}

	reach(second, clusters.SecondToken)
	firstCA, secondCA := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	for _, op := range []pulumitest.Operation{pulumitest.Preview, pulumitest.Up} {
		res, refusal := stack.Try(op, nil)
		if refusal == nil {
			t.Fatalf("pulumi %s after the kubeconfig was edited to reach the second cluster: not refused\n%s", op, res.Log)
		}
		for _, want := range []string{"different cluster", firstCA, secondCA, uid} {
			if !strings.Contains(refusal.Error(), want) {
				t.Fatalf("pulumi %s: the refusal does not say %q: %v", op, want, refusal)
			}
		}
		for _, token := range []string{clusters.FirstToken, clusters.SecondToken} {
			if strings.Contains(res.Log, token) || strings.Contains(refusal.Error(), token) {
				t.Fatalf("pulumi %s: the output holds a ServiceAccount token", op)
			}
		}
	}
	cs := kubernetes.NewForConfigOrDie(second.RESTConfig())
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Fatal("the object was created in the second cluster")
	}
	if records, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"}); err != nil || len(records.Items) != 0 {
		t.Fatalf("release records in the second cluster (err %v)", err)
	}
	reach(first, "")
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 4})
}

// identityFixture is acctest.SwitchedClusterFixture for an account that
// manages ConfigMaps and Secrets (a release's records), and a chart of one
// ConfigMap.
func identityFixture(t *testing.T, object, patched string) (ns string, clusters *acctest.TwoClusters, name, target, chart string) {
	t.Helper()
	rules := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	ns, clusters, name, target = acctest.SwitchedClusterFixture(t, rules, object, patched)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return ns, clusters, name, target, filepath.Join(repo, "provider", "helmrelease", "testdata", "charts", "one-configmap")
}

// identityProgram is a Pulumi YAML program of an object, a patch of target and
// a release of chart, all through conn, exporting each one's clusterUid.
func identityProgram(t *testing.T, conn map[string]any, ns, name, target, chart, release string) string {
	t.Helper()
	b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-identity", "runtime": "yaml", "resources": map[string]any{
		"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
			"clusterConnection": conn,
			"yamlBody":          fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns),
		}},
		"p": map[string]any{"type": "k8sconnect:Patch", "properties": map[string]any{
			"clusterConnection": conn,
			"target":            map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": ns, "name": target},
			"patch":             "data: {patched-by: k8sconnect}",
			"takeOwnership":     true,
		}},
		"app": map[string]any{"type": "k8sconnect:HelmRelease", "properties": map[string]any{
			"clusterConnection": conn, "name": release, "namespace": ns, "chart": chart, "timeout": "60s",
		}},
	}, "outputs": map[string]any{"cm": "${cm.clusterUid}", "p": "${p.clusterUid}", "app": "${app.clusterUid}"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// clusterId (cluster_connection.cluster_id) flows through Pulumi: an object
// created under clusterId "prod-eu" previews with nothing to do; its program
// changed to clusterId "staging", as a stack's config pointed at the wrong
// environment would leave it, preview and up are refused naming both values,
// the object is not touched, and no output holds the token. Set back, the
// preview has nothing to do.
func TestPulumiIdentity_clusterIDPin(t *testing.T) {
	skipShort(t)
	t.Parallel()
	c := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("pinned")
	program := func(clusterID string) string {
		b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-cluster-id", "runtime": "yaml", "resources": map[string]any{
			"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
				"clusterConnection": map[string]any{"host": c.Host, "clusterCaCertificate": string(c.CAPEM),
					"token": map[string]any{"fn::secret": c.Token}, "clusterId": clusterID},
				"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns),
			}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stack := pulumitest.NewYAMLProgram(t, program("prod-eu"))
	stack.Run(pulumitest.Up, nil)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 2})
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	version := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion()

	stack.WriteYAML(program("staging"))
	for _, op := range []pulumitest.Operation{pulumitest.Preview, pulumitest.Up} {
		res, refusal := stack.Try(op, nil)
		if refusal == nil || !strings.Contains(refusal.Error(), "staging") || !strings.Contains(refusal.Error(), "pinned as") ||
			!strings.Contains(refusal.Error(), "prod-eu") {
			t.Fatalf("pulumi %s under another clusterId: want a refusal naming both values, got %v\n%s", op, refusal, res.Log)
		}
		if strings.Contains(res.Log, c.Token) || strings.Contains(refusal.Error(), c.Token) {
			t.Fatalf("pulumi %s: the output holds the token", op)
		}
	}
	if got := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion(); got != version {
		t.Fatal("the object was written under another clusterId")
	}
	stack.WriteYAML(program("prod-eu"))
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 2})
}

// The same pin in an explicit provider's clusterConnection, the way a stack
// names its cluster once: another clusterId there is refused at preview and
// up, before anything is written, and the stack's provider is not replaced
// (which would replace every object it made).
func TestPulumiIdentity_providerClusterIDPin(t *testing.T) {
	skipShort(t)
	t.Parallel()
	c := localcluster.Shared(t)
	ns, name := acctest.Namespace(t), acctest.Name("pinned")
	program := func(clusterID string) string {
		b, err := yaml.Marshal(map[string]any{"name": "k8sconnect-provider-cluster-id", "runtime": "yaml", "resources": map[string]any{
			"k8s": map[string]any{"type": "pulumi:providers:k8sconnect", "properties": map[string]any{
				"clusterConnection": map[string]any{"host": c.Host, "clusterCaCertificate": string(c.CAPEM),
					"token": map[string]any{"fn::secret": c.Token}, "clusterId": clusterID}}},
			"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "options": map[string]any{"provider": "${k8s}"},
				"properties": map[string]any{
					"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns),
				}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stack := pulumitest.NewYAMLProgram(t, program("prod-eu"))
	stack.Run(pulumitest.Up, nil)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 3})
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	live := acctest.MustGet(t, configMaps, ns, name)

	stack.WriteYAML(program("staging"))
	for _, op := range []pulumitest.Operation{pulumitest.Preview, pulumitest.Up} {
		res, refusal := stack.Try(op, nil)
		if refusal == nil || !strings.Contains(refusal.Error(), "staging") || !strings.Contains(refusal.Error(), "prod-eu") {
			t.Fatalf("pulumi %s under another provider clusterId: want a refusal naming both values, got %v\n%s", op, refusal, res.Log)
		}
		if strings.Contains(res.Log, "replace") {
			t.Errorf("pulumi %s under another provider clusterId planned a replacement:\n%s", op, res.Log)
		}
		if strings.Contains(res.Log, c.Token) || strings.Contains(refusal.Error(), c.Token) {
			t.Fatalf("pulumi %s: the output holds the token", op)
		}
	}
	now := acctest.MustGet(t, configMaps, ns, name)
	if now.GetUID() != live.GetUID() || now.GetResourceVersion() != live.GetResourceVersion() {
		t.Fatal("the object was written or replaced under another clusterId")
	}
	// Set back: the failed up recorded the provider's new inputs (the
	// engine updates a provider before its resources), so the provider is
	// updated back, and the object is left as it is.
	stack.WriteYAML(program("prod-eu"))
	stack.Run(pulumitest.Up, nil)
	expectChanges(t, stack.Run(pulumitest.Preview, nil), map[string]int{"same": 3})
	if got := acctest.MustGet(t, configMaps, ns, name).GetResourceVersion(); got != live.GetResourceVersion() {
		t.Fatal("setting the pin back wrote the object")
	}
}
