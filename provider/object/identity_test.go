package object_test

// Cluster identity for credentials that may not read kube-system: a CI
// ServiceAccount bound to one namespace. Each test plays what such a user
// does, or suffers, and checks what they would check: the exit code, the
// message, the state, and where the object is.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// configMapRules let an account manage the ConfigMaps of its namespace, and
// so read kube-root-ca.crt there too.
var configMapRules = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}

// secretRules let an account manage the Secrets of its namespace: it may
// read neither kube-system nor kube-root-ca.crt.
var secretRules = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
	Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}

// objectAndPatch is a ConfigMap k8sconnect_object creates and a
// k8sconnect_patch of another ConfigMap, both through conn.
func objectAndPatch(conn, ns, name, target string) string {
	return configMapConfig(conn, ns, name, "hello") + fmt.Sprintf(`
resource "k8sconnect_patch" "p" {
  target = { api_version = "v1", kind = "ConfigMap", name = %q, namespace = %q }
  patch  = <<-YAML
    data:
      patched-by: k8sconnect
  YAML
  take_ownership = true
  %s
}
`, target, ns, conn)
}

// A namespace-bound ServiceAccount, whose token gets 403 on kube-system,
// creates an object and patches another. The identity recorded is the CA
// that verified the API server in the TLS handshake. The kubeconfig context
// is then switched to a second cluster, where the same account exists (and
// the object does not): the plan fails naming both CAs, keeps both
// resources in state and creates nothing there. Before this identity, the
// check was skipped for such an account: the refresh read NotFound, dropped
// both from state and planned a create in the second cluster.
func TestAccIdentity_namespaceAccountSwitchedToASecondCluster(t *testing.T) {
	t.Parallel()
	ns, clusters, name, target := acctest.SwitchedClusterFixture(t, configMapRules, "ci-owned", "ci-patched")
	first, second := clusters.First, clusters.Second

	conn := func(context string) string {
		return fmt.Sprintf("cluster_connection = {\n    kubeconfig_file = %q\n    context = %q\n  }", clusters.Kubeconfig, context)
	}
	w := acctest.NewWorkdir(t)
	w.Write(objectAndPatch(conn("first"), ns, name, target))
	w.Cleanup()
	if r := w.MustApply(); len(identityWarnings(r)) != 0 {
		t.Fatalf("an account whose connection verifies the cluster's CA was warned about identity: %+v", identityWarnings(r))
	}
	firstCA, secondCA := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	for _, address := range []string{"k8sconnect_object.cm", "k8sconnect_patch.p"} {
		if got := w.StateAttribute(address, "cluster_uid"); got != "tls-ca-sha256:"+firstCA {
			t.Fatalf("%s: cluster_uid = %q, want the first cluster's CA, tls-ca-sha256:%s", address, got, firstCA)
		}
	}

	w.Write(objectAndPatch(conn("second"), ns, name, target))
	r := w.Plan()
	w.MustFail(r, "plan after switching the context to the second cluster")
	if !r.HasError("different cluster", firstCA, secondCA) {
		t.Fatalf("the error does not name both CAs (%s, %s): %+v", firstCA, secondCA, r.Errors())
	}
	expectKeptAndNotThere(t, w, r, clusters, ns, name)
	w.Write(objectAndPatch(conn("first"), ns, name, target))
	w.MustPlanNoChanges()
}

// An object created, and a target patched, with credentials that read
// kube-system record its UID, as before, and also the CA seen in the same
// handshake. Later runs use a namespace-bound account (a pipeline's), which
// cannot read kube-system: the plan compares the CA instead, so it confirms
// the cluster without a warning and changes nothing. The kubeconfig is then
// edited to reach a second cluster, where the same account exists: the plan
// refuses, naming both CAs and the UID it could not read, keeps both resources
// in state and creates nothing there. Before the CA was kept beside the UID,
// that plan only warned, the refresh read NotFound there, and the object left
// state to be created again in the wrong cluster.
func TestAccIdentity_adminMadeObjectsStayCheckedUnderANamespaceAccount(t *testing.T) {
	t.Parallel()
	ns, clusters, name, target := acctest.SwitchedClusterFixture(t, configMapRules, "admin-made", "admin-patched")
	first, second := clusters.First, clusters.Second
	kubeconfig := filepath.Join(t.TempDir(), "config")
	reach := func(c *localcluster.Cluster, token string) {
		acctest.WriteKubeconfig(t, kubeconfig, "ci", map[string]acctest.KubeContext{"ci": {Cluster: c, Token: token}})
	}
	reach(first, "") // the admin's
	w := acctest.NewWorkdir(t)
	w.Write(objectAndPatch(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, target))
	w.Cleanup()
	w.MustApply()
	uid := acctest.KubeSystemUID(t, first)
	for _, address := range []string{"k8sconnect_object.cm", "k8sconnect_patch.p"} {
		if got := w.StateAttribute(address, "cluster_uid"); got != uid {
			t.Fatalf("%s: cluster_uid = %q, want kube-system's UID %s", address, got, uid)
		}
	}

	reach(first, clusters.FirstToken)
	r := w.Run("plan", "-input=false", "-json", "-detailed-exitcode")
	if add, change, remove := r.Changes(); r.Err != nil || add != 0 || change != 0 || remove != 0 {
		t.Fatalf("plan with the namespace account: want no changes, have +%d ~%d -%d (%v)\n%s", add, change, remove, r.Err, r.Output)
	}
	if got := identityWarnings(r); len(got) != 0 {
		t.Fatalf("the namespace account's connection verifies the CA recorded beside the UID, yet it was warned: %+v", got)
	}

	reach(second, clusters.SecondToken)
	r = w.Plan()
	w.MustFail(r, "plan with the namespace account, its kubeconfig edited to reach the second cluster")
	firstCA, secondCA := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	if !r.HasError("different cluster", firstCA, secondCA, uid) {
		t.Fatalf("the error does not name both CAs (%s, %s) and the UID it could not read (%s): %+v", firstCA, secondCA, uid, r.Errors())
	}
	expectKeptAndNotThere(t, w, r, clusters, ns, name)
	reach(first, clusters.FirstToken)
	w.MustPlanNoChanges()
}

// The API server's certificate is renewed by the same CA: the identity holds
// and nothing changes. The CA itself is then replaced: the plan refuses, as
// for another cluster, and says how to accept the new identity; doing so
// (state rm and import) records it, and the next plan is clean. The cluster
// sits behind a TLS-terminating proxy whose certificates the test rotates.
func TestAccIdentity_servingCertificateAndCARotation(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	proxy := faultproxy.New(t, c.Host, c.CAPEM)
	ns, name := acctest.Namespace(t), acctest.Name("rotated")
	token := acctest.NamespaceAccount(t, c, ns, "ci", configMapRules)
	// The kubeconfig a user refreshes when the cluster's CA changes; import
	// reads it through $KUBECONFIG.
	kubeconfig := filepath.Join(t.TempDir(), "config")
	writeKubeconfig := func() {
		acctest.WriteKubeconfig(t, kubeconfig, "proxied", map[string]acctest.KubeContext{
			"proxied": {Cluster: &localcluster.Cluster{Host: proxy.URL, CAPEM: proxy.CAPEM}, Token: token}})
	}
	writeKubeconfig()
	w := acctest.NewWorkdir(t)
	w.SetEnv("KUBECONFIG", kubeconfig)
	w.Write(configMapConfig(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, "hello"))
	w.Cleanup()
	w.MustApply()
	oldCA := acctest.CAFingerprint(t, proxy.CAPEM)
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != "tls-ca-sha256:"+oldCA {
		t.Fatalf("cluster_uid = %q, want the proxy's CA tls-ca-sha256:%s", got, oldCA)
	}
	uid := acctest.UID(t, configMaps, ns, name)

	if err := proxy.RotateServingCert(); err != nil {
		t.Fatal(err)
	}
	w.MustPlanNoChanges()

	newPEM, err := proxy.RotateCA()
	if err != nil {
		t.Fatal(err)
	}
	newCA := acctest.CAFingerprint(t, newPEM)
	writeKubeconfig() // the user trusts the new CA
	r := w.Plan()
	w.MustFail(r, "plan after the CA was rotated")
	if !r.HasError("different cluster", oldCA, newCA, "CA was rotated", "state rm", "import") {
		t.Fatalf("the refusal should name both CAs and say how to accept the new identity: %+v", r.Errors())
	}
	if strings.Contains(r.Output, token) {
		t.Fatal("the plan's output holds the ServiceAccount token")
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("state lost the object: %q", got)
	}

	// Accept the new identity, as the message says.
	if r := w.Run("state", "rm", "k8sconnect_object.cm"); r.Err != nil {
		t.Fatalf("state rm: %v\n%s", r.Err, r.Output)
	}
	if r := w.Run("import", "-input=false", "k8sconnect_object.cm", "v1/ConfigMap/"+ns+"/"+name); r.Err != nil {
		t.Fatalf("import: %v\n%s", r.Err, r.Output)
	}
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != "tls-ca-sha256:"+newCA {
		t.Fatalf("after the import cluster_uid = %q, want the new CA tls-ca-sha256:%s", got, newCA)
	}
	w.MustApply()
	w.MustPlanNoChanges()
	if got := acctest.UID(t, configMaps, ns, name); got != uid {
		t.Fatalf("accepting the new identity replaced the object: UID %s, was %s", got, uid)
	}
}

// Without a CA of its own (insecure = true), the connection falls back to
// ConfigMap kube-root-ca.crt in the object's namespace. An account that may
// read neither that nor kube-system gets no identity at all: the plan says
// so and what the user loses, and still applies.
func TestAccIdentity_insecureFallsBackToKubeRootCAThenWarns(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	insecure := func(token string) string {
		return fmt.Sprintf("cluster_connection = {\n    host = %q\n    insecure = true\n    token = %q\n  }", c.Host, token)
	}

	cmToken := acctest.NamespaceAccount(t, c, ns, "ci-configmaps", configMapRules)
	name := acctest.Name("root-ca")
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(insecure(cmToken), ns, name, "hello"))
	w.Cleanup()
	w.MustApply()
	root := acctest.MustGet(t, configMaps, ns, "kube-root-ca.crt")
	bundle, _ := root.Object["data"].(map[string]any)["ca.crt"].(string)
	want := "kube-root-ca-sha256:" + acctest.CAFingerprint(t, []byte(bundle))
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != want {
		t.Fatalf("cluster_uid = %q, want %s", got, want)
	}
	w.MustPlanNoChanges()

	secretToken := acctest.NamespaceAccount(t, c, ns, "ci-secrets", secretRules)
	secret := acctest.Name("no-identity")
	w2 := acctest.NewWorkdir(t)
	w2.Write(fmt.Sprintf(`
resource "k8sconnect_object" "s" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: Secret
    metadata: {name: %s, namespace: %s}
    stringData: {greeting: hello}
  YAML
  %s
}
`, secret, ns, insecure(secretToken)))
	w2.Cleanup()
	r := w2.Plan()
	if r.Err != nil {
		t.Fatalf("plan without any identity must not fail: %v\n%s", r.Err, r.Output)
	}
	if !hasWarning(r, "No cluster identity", "may not read namespace kube-system", "insecure",
		"kube-root-ca.crt cannot be read in namespace "+ns, "not noticed", "cluster_ca_certificate") {
		t.Fatalf("the plan should say that no identity could be established, why, and what is lost: %+v", r.Warnings())
	}
	if strings.Contains(r.Output, secretToken) {
		t.Fatal("the plan's output holds the ServiceAccount token")
	}
	w2.MustApply()
	if got := w2.StateAttribute("k8sconnect_object.s", "cluster_uid"); got != "" {
		t.Fatalf("cluster_uid = %q, want empty: nothing could name the cluster", got)
	}
}

// expectKeptAndNotThere checks what a refused plan against the second cluster
// must leave: both resources in state, the object not created there, and no
// token in the output.
func expectKeptAndNotThere(t *testing.T, w *acctest.Workdir, r acctest.Result, clusters *acctest.TwoClusters, ns, name string) {
	t.Helper()
	if got := w.StateList(); len(got) != 2 {
		t.Fatalf("state lost a resource: %q", got)
	}
	if _, err := kubernetes.NewForConfigOrDie(clusters.Second.RESTConfig()).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Fatal("the object was created in the second cluster")
	}
	for _, token := range []string{clusters.FirstToken, clusters.SecondToken} {
		if strings.Contains(r.Output, token) {
			t.Fatal("the plan's output holds a ServiceAccount token")
		}
	}
}

func identityWarnings(r acctest.Result) []acctest.Diagnostic {
	var out []acctest.Diagnostic
	for _, d := range r.Warnings() {
		if strings.Contains(d.Summary, "cluster identity") || strings.Contains(d.Summary, "could not be confirmed") {
			out = append(out, d)
		}
	}
	return out
}

// hasWarning reports a warning whose summary or detail contains every part.
func hasWarning(r acctest.Result, parts ...string) bool {
	for _, d := range r.Warnings() {
		text := d.Summary + "\n" + d.Detail
		all := true
		for _, p := range parts {
			all = all && strings.Contains(text, p)
		}
		if all {
			return true
		}
	}
	return false
}

// A cluster that cannot be confirmed is never acted on. An admin creates an
// object (its kube-system UID recorded, and the CA of the handshake and
// kube-root-ca.crt's beside it); a pipeline then reaches a second cluster
// where the object does not exist, through an insecure connection with a
// namespace-bound account that may read Secrets only: neither the UID, nor a
// handshake CA, nor kube-root-ca.crt can be read, so nothing confirms or
// refutes the cluster. (An account that may read ConfigMaps reads the second
// cluster's kube-root-ca.crt, and the plan refuses it as another cluster:
// TestAccIdentity_twoClustersBehindOneFrontCA.) Before, the plan only warned, the refresh read
// NotFound there, dropped the object from state and planned it again in the
// wrong cluster. Now the plan fails naming why, a refresh-only run keeps
// state as it was and says so, a destroy is refused, and the object is
// neither dropped nor made in the second cluster; back on the first cluster
// nothing changes.
func TestAccIdentity_unconfirmedClusterIsNeverActedOn(t *testing.T) {
	t.Parallel()
	ns, clusters, name, _ := acctest.SwitchedClusterFixture(t, secretRules, "admin-made", "unused")
	first, second := clusters.First, clusters.Second
	kubeconfig := filepath.Join(t.TempDir(), "config")
	asAdmin := func() {
		acctest.WriteKubeconfig(t, kubeconfig, "admin", map[string]acctest.KubeContext{"admin": {Cluster: first}})
	}
	// The file edited as a pipeline's tooling would: the second cluster,
	// insecure, the namespace account's token.
	asPipeline := func() {
		text := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]\n"+
			"users: [{name: u, user: {token: %q}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n",
			second.Host, clusters.SecondToken)
		if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	asAdmin()
	config := configMapConfig(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, "hello")
	w := acctest.NewWorkdir(t)
	w.Write(config)
	w.Cleanup()
	w.MustApply()
	uid := acctest.KubeSystemUID(t, first)
	if got := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"); got != uid {
		t.Fatalf("cluster_uid = %q, want kube-system's UID %s", got, uid)
	}

	asPipeline()
	r := w.Plan()
	w.MustFail(r, "plan through a connection that can confirm no recorded identity")
	if !r.HasError("Cannot confirm which cluster this is", "cannot be compared", "does not act on a cluster it cannot confirm") {
		t.Fatalf("the plan should refuse, saying it cannot confirm the cluster: %+v", r.Errors())
	}
	refresh := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	if refresh.Err != nil {
		t.Fatalf("a refresh-only run should keep state and succeed: %v\n%s", refresh.Err, refresh.Output)
	}
	if !hasWarning(refresh, "state kept as it was", "cannot be compared") {
		t.Errorf("the refresh should say it kept state because the cluster could not be confirmed: %+v", refresh.Warnings())
	}
	destroy := w.Destroy()
	w.MustFail(destroy, "destroy through a connection that can confirm no recorded identity")
	if !destroy.HasError("refused", "cannot be compared") {
		t.Errorf("the destroy should be refused, saying why: %+v", destroy.Errors())
	}
	if got := w.StateList(); len(got) != 1 {
		t.Fatalf("state lost the object: %q", got)
	}
	if _, err := kubernetes.NewForConfigOrDie(second.RESTConfig()).CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		t.Fatal("the object was created in the second cluster")
	}
	for _, out := range []string{r.Output, refresh.Output, destroy.Output} {
		if strings.Contains(out, clusters.SecondToken) {
			t.Fatal("the output holds the ServiceAccount token")
		}
	}
	acctest.MustGet(t, configMaps, ns, name)

	asAdmin()
	w.MustPlanNoChanges()
}

// Two clusters behind one front CA (Rancher, Teleport, one corporate PKI):
// each is reached through a TLS-terminating proxy, and both proxies present
// certificates of one CA, so the handshake names them alike. A
// namespace-bound account, which cannot read kube-system, creates an object
// and patches another through the first; the create records the front CA and,
// beside it, the first cluster's kube-root-ca.crt. The kubeconfig is then
// edited to reach the second cluster through its proxy, where the same
// account exists: the plan, a refresh-only run and a destroy each refuse,
// naming both clusters' kube-root-ca.crt, state keeps both resources, and
// nothing is made in the second cluster. Before every readable source was
// compared, the shared handshake CA confirmed the second cluster: the
// refresh read NotFound there, dropped the object and planned it there.
func TestAccIdentity_twoClustersBehindOneFrontCA(t *testing.T) {
	t.Parallel()
	ns, clusters, name, target := acctest.SwitchedClusterFixture(t, configMapRules, "fronted", "fronted-patched")
	first, second := clusters.First, clusters.Second
	front := faultproxy.New(t, first.Host, first.CAPEM)
	other := faultproxy.New(t, second.Host, second.CAPEM)
	if err := other.ShareCA(front); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "config")
	through := func(p *faultproxy.Proxy, token string) {
		acctest.WriteKubeconfig(t, kubeconfig, "rancher", map[string]acctest.KubeContext{
			"rancher": {Cluster: &localcluster.Cluster{Host: p.URL, CAPEM: p.CAPEM}, Token: token}})
	}
	through(front, clusters.FirstToken)
	w := acctest.NewWorkdir(t)
	w.Write(objectAndPatch(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, target))
	w.Cleanup()
	w.MustApply()
	frontCA := acctest.CAFingerprint(t, front.CAPEM)
	firstRoot, secondRoot := acctest.CAFingerprint(t, first.CAPEM), acctest.CAFingerprint(t, second.CAPEM)
	for _, address := range []string{"k8sconnect_object.cm", "k8sconnect_patch.p"} {
		if got := w.StateAttribute(address, "cluster_uid"); got != "tls-ca-sha256:"+frontCA {
			t.Fatalf("%s: cluster_uid = %q, want the front CA, tls-ca-sha256:%s", address, got, frontCA)
		}
	}
	w.MustPlanNoChanges()

	through(other, clusters.SecondToken)
	r := w.Plan()
	w.MustFail(r, "plan after the kubeconfig was edited to the second cluster behind the same front CA")
	if !r.HasError("different cluster", "kube-root-ca.crt", firstRoot, secondRoot) {
		t.Fatalf("the plan should refuse naming both clusters' kube-root-ca.crt (%s, %s): %+v", firstRoot, secondRoot, r.Errors())
	}
	expectKeptAndNotThere(t, w, r, clusters, ns, name)
	refresh := w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
	w.MustFail(refresh, "refresh-only run against the second cluster")
	if !refresh.HasError("different cluster", firstRoot, secondRoot) {
		t.Fatalf("the refresh should refuse naming both clusters: %+v", refresh.Errors())
	}
	expectKeptAndNotThere(t, w, refresh, clusters, ns, name)
	destroy := w.Destroy()
	w.MustFail(destroy, "destroy against the second cluster")
	if !destroy.HasError("different cluster", firstRoot, secondRoot) {
		t.Fatalf("the destroy should refuse naming both clusters: %+v", destroy.Errors())
	}
	expectKeptAndNotThere(t, w, destroy, clusters, ns, name)
	acctest.MustGet(t, configMaps, ns, name)

	through(front, clusters.FirstToken)
	w.MustPlanNoChanges()
}

// The kube-system UID outranks a CA. An admin creates an object through a
// proxy (the cluster behind a TLS-terminating front), recording the UID and,
// beside it, the proxy's CA and kube-root-ca.crt's. The proxy's CA is then
// replaced, as a front's CA is rotated: every identity that can be read is
// compared, and the handshake's CA differs, but the UID, unique to the
// cluster and unchanged, confirms it. The plan warns that the CA changed,
// naming both, and plans nothing; an apply records the new CA, and the next
// plan is clean. Were every readable identity to refute alike, a routine CA
// rotation would refuse every object an admin made.
func TestAccIdentity_uidOutranksARotatedCA(t *testing.T) {
	t.Parallel()
	c := localcluster.Shared(t)
	proxy := faultproxy.New(t, c.Host, c.CAPEM)
	ns, name := acctest.Namespace(t), acctest.Name("admin-rotated")
	kubeconfig := filepath.Join(t.TempDir(), "config")
	writeKubeconfig := func() {
		acctest.WriteKubeconfig(t, kubeconfig, "proxied", map[string]acctest.KubeContext{
			"proxied": {Cluster: &localcluster.Cluster{Host: proxy.URL, CAPEM: proxy.CAPEM, Token: c.Token}}})
	}
	writeKubeconfig()
	w := acctest.NewWorkdir(t)
	w.Write(configMapConfig(fmt.Sprintf("cluster_connection = { kubeconfig_file = %q }", kubeconfig), ns, name, "hello"))
	w.Cleanup()
	w.MustApply()
	if got, want := w.StateAttribute("k8sconnect_object.cm", "cluster_uid"), acctest.KubeSystemUID(t, c); got != want {
		t.Fatalf("cluster_uid = %q, want kube-system's UID %s", got, want)
	}
	oldCA := acctest.CAFingerprint(t, proxy.CAPEM)
	newPEM, err := proxy.RotateCA()
	if err != nil {
		t.Fatal(err)
	}
	newCA := acctest.CAFingerprint(t, newPEM)
	writeKubeconfig()
	r := w.Run("plan", "-input=false", "-json", "-detailed-exitcode")
	if add, change, remove := r.Changes(); r.Err != nil || add+change+remove != 0 {
		t.Fatalf("plan after the front's CA was rotated: want no changes, have +%d ~%d -%d (%v)\n%s", add, change, remove, r.Err, r.Output)
	}
	if !hasWarning(r, "The cluster's CA changed", "kube-system", oldCA, newCA) {
		t.Fatalf("the plan should warn that the CA changed, naming both: %+v", r.Warnings())
	}
	w.MustApply()
	if r := w.Plan(); r.Err != nil || hasWarning(r, "The cluster's CA changed") {
		t.Fatalf("after an apply recorded the new CA the plan still warns (%v): %+v", r.Err, r.Warnings())
	}
}
