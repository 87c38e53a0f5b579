// Package badinput_test is the one table of invalid configurations: YAML,
// identity, connection, patch, wait and data sources. Each case runs a real
// `apply -auto-approve` (terraform, or tofu with K8SCONNECT_ENGINE=tofu) and
// must be refused at plan, with an error that tells the user what to do, and
// with nothing created or changed in the cluster, as read back from the
// cluster itself.
package badinput_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

func TestMain(m *testing.M) { acctest.Main(m) }

var (
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	clusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

// ref is one object in the cluster.
type ref struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

func (r ref) String() string { return fmt.Sprintf("%s %s/%s", r.gvr.Resource, r.namespace, r.name) }

// env is what one case's configuration is built from.
type env struct {
	NS   string // the suite's namespace
	Name string // unique to the case: the object the case declares
	Conn string // a working cluster_connection attribute
	Dir  string // the configuration directory, for files the case reads
	t    *testing.T
	// untouched are objects that exist before the run and must not change:
	// their resourceVersion at the start.
	untouched map[ref]string
}

// cm is a valid ConfigMap manifest named e.Name, with extra YAML appended.
func (e *env) cm(extra string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n%s", e.Name, e.NS, extra)
}

// object is a k8sconnect_object "bad" with yaml_body and more attributes
// (the working connection unless attrs holds one).
func (e *env) object(body string, attrs ...string) string {
	a := strings.Join(attrs, "\n  ")
	if !strings.Contains(a, "cluster_connection") {
		a += "\n  " + e.Conn
	}
	return fmt.Sprintf("resource \"k8sconnect_object\" \"bad\" {\n  yaml_body = %q\n  %s\n}\n", body, a)
}

// withConn is a ConfigMap named e.Name applied through a cluster_connection
// with the given attributes.
func (e *env) withConn(attrs string) string {
	return e.object(e.cm("data: {a: b}\n"), "cluster_connection = {\n    "+attrs+"\n  }")
}

// target creates a ConfigMap named e.Name under another field manager, for
// patches to aim at, and records it as an object the run must not change.
func (e *env) target() {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e.Name, Namespace: e.NS}, Data: map[string]string{"a": "1"}}
	out, err := acctest.Clientset(e.t).CoreV1().ConfigMaps(e.NS).Create(context.Background(), cm, metav1.CreateOptions{FieldManager: "tool"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.untouched[ref{configMaps, e.NS, e.Name}] = out.ResourceVersion
}

// patch is a k8sconnect_patch "bad" on the ConfigMap e.target made.
func (e *env) patch(body string) string {
	return fmt.Sprintf("resource \"k8sconnect_patch\" \"bad\" {\n  target = { api_version = \"v1\", kind = \"ConfigMap\", name = %q, namespace = %q }\n  %s\n  %s\n}\n",
		e.Name, e.NS, body, e.Conn)
}

// wait is a valid ConfigMap named e.Name and a k8sconnect_wait "bad" on it.
func (e *env) wait(waitFor string) string {
	return fmt.Sprintf("resource \"k8sconnect_object\" \"cm\" {\n  yaml_body = %q\n  %s\n}\n"+
		"resource \"k8sconnect_wait\" \"bad\" {\n  resource_ref = k8sconnect_object.cm.resource_ref\n  wait_for = %s\n}\n",
		e.cm("data: {a: b}\n"), e.Conn, waitFor)
}

// split is a k8sconnect_yaml_split "bad" with the given attributes, its
// manifests applied with for_each, the way a user would write it.
func (e *env) split(attrs string) string {
	return fmt.Sprintf("data \"k8sconnect_yaml_split\" \"bad\" {\n  %s\n}\n"+
		"resource \"k8sconnect_object\" \"each\" {\n  for_each = data.k8sconnect_yaml_split.bad.manifests\n  yaml_body = each.value\n  %s\n}\n",
		attrs, e.Conn)
}

// scoped is the same with k8sconnect_yaml_scoped, applying its namespaced
// manifests.
func (e *env) scoped(attrs string) string {
	return fmt.Sprintf("data \"k8sconnect_yaml_scoped\" \"bad\" {\n  %s\n}\n"+
		"resource \"k8sconnect_object\" \"each\" {\n  for_each = data.k8sconnect_yaml_scoped.bad.namespaced\n  yaml_body = each.value\n  %s\n}\n",
		attrs, e.Conn)
}

// helmChart writes a chart into the configuration directory's chart/: its
// templates render the ConfigMap e.Name (and whatever templates adds), its
// values.schema.json wants replicas to be an integer, chartYAML is appended
// to its Chart.yaml.
func (e *env) helmChart(chartYAML string, templates map[string]string) {
	e.file("chart/Chart.yaml", "apiVersion: v2\nname: bad\nversion: 0.1.0\n"+chartYAML)
	e.file("chart/values.yaml", "replicas: 1\n")
	e.file("chart/values.schema.json", `{"type": "object", "properties": {"replicas": {"type": "integer"}}}`)
	e.file("chart/templates/configmap.yaml", e.cm("data:\n  replicas: {{ .Values.replicas | quote }}\n"))
	for name, text := range templates {
		e.file("chart/templates/"+name, text)
	}
}

// helm is a k8sconnect_helm_template "bad" of the chart helmChart wrote,
// with more attributes, applying its namespaced objects.
func (e *env) helm(attrs string) string {
	return fmt.Sprintf("data \"k8sconnect_helm_template\" \"bad\" {\n  name = \"bad\"\n  namespace = %q\n"+
		"  chart = \"${path.module}/chart\"\n  %s\n  %s\n}\n"+
		"resource \"k8sconnect_object\" \"each\" {\n  for_each = data.k8sconnect_helm_template.bad.namespaced\n  yaml_body = each.value\n  %s\n}\n",
		e.NS, attrs, e.Conn, e.Conn)
}

// file writes a file into the configuration directory and returns its path.
func (e *env) file(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

type badCase struct {
	name string
	// setup prepares the cluster or files before the run (optional).
	setup func(e *env)
	// config is the case's configuration.
	config func(e *env) string
	// want are fragments that one error diagnostic (summary and detail, with
	// whitespace collapsed) must all contain: what is wrong and what to do.
	want []string
	// absent are the objects the case declares, which must not exist after
	// the run; nil means the ConfigMap e.Name in e.NS.
	absent func(e *env) []ref
}

func TestAccBadInput(t *testing.T) {
	ns, conn := acctest.Namespace(t), acctest.Connection(t)
	cluster := localcluster.Shared(t)
	cases := badCases(cluster)

	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("two cases are named %q", tc.name)
		}
		seen[tc.name] = true
	}
	if len(cases) < 50 {
		t.Fatalf("the table has %d cases; it must hold at least 50", len(cases))
	}

	// The control: the checks below can fail. A valid configuration, the
	// sentinel alone, is applied, the engine's apply_start for it is seen,
	// and the object is found in the cluster.
	t.Run("control: a valid configuration is applied", func(t *testing.T) {
		t.Parallel()
		name := acctest.Name("control")
		w := acctest.NewWorkdir(t)
		w.Write(sentinelConfig(ns, name, conn))
		w.Cleanup()
		r := w.Apply()
		if r.Err != nil {
			t.Fatalf("%s apply of a valid configuration failed: %v\n%s", acctest.Engine(), r.Err, r.Output)
		}
		if got := applyStarts(r.Output); len(got) != 1 || got[0] != "k8sconnect_object.sentinel" {
			t.Errorf("apply_start events = %v, want [k8sconnect_object.sentinel]", got)
		}
		acctest.MustGet(t, configMaps, ns, name)
	})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &env{NS: ns, Name: acctest.Name("bad"), Conn: conn, t: t, untouched: map[ref]string{}}
			w := acctest.NewWorkdir(t)
			e.Dir = w.Dir()
			if tc.setup != nil {
				tc.setup(e)
			}
			// A valid object beside the bad one: if anything at all is
			// applied, it is created, and the check below sees it.
			sentinel := ref{configMaps, ns, e.Name + "-sentinel"}
			w.Write(tc.config(e) + sentinelConfig(ns, sentinel.name, conn))

			r := w.Apply()

			var exit *exec.ExitError
			if !errors.As(r.Err, &exit) || exit.ExitCode() == 0 {
				t.Errorf("%s apply: want a non-zero exit, got %v", acctest.Engine(), r.Err)
			}
			if started := applyStarts(r.Output); len(started) > 0 {
				t.Errorf("the error came at apply, not at plan: the engine started applying %v", started)
			}
			if !hasError(r, tc.want) {
				t.Errorf("no error diagnostic contains all of %q; errors were:\n%s", tc.want, describe(r))
			}
			absent := []ref{{configMaps, ns, e.Name}}
			if tc.absent != nil {
				absent = tc.absent(e)
			}
			for _, o := range append(absent, sentinel) {
				obj, err := acctest.Get(t, o.gvr, o.namespace, o.name)
				if err != nil {
					t.Errorf("reading %s: %v", o, err)
				} else if obj != nil {
					t.Errorf("%s exists in the cluster after a refused run", o)
				}
			}
			for o, rv := range e.untouched {
				obj, err := acctest.Get(t, o.gvr, o.namespace, o.name)
				switch {
				case err != nil:
					t.Errorf("reading %s: %v", o, err)
				case obj == nil:
					t.Errorf("%s was deleted by a refused run", o)
				case obj.GetResourceVersion() != rv:
					t.Errorf("%s was changed by a refused run: resourceVersion %s, was %s; managedFields %v",
						o, obj.GetResourceVersion(), rv, obj.GetManagedFields())
				}
			}
			t.Logf("errors:\n%s", describe(r))
			if t.Failed() {
				t.Logf("configuration:\n%s\noutput:\n%s", tc.config(e), r.Output)
			}
		})
	}
}

// sentinelConfig is a valid k8sconnect_object "sentinel": a ConfigMap.
func sentinelConfig(ns, name, conn string) string {
	return fmt.Sprintf("resource \"k8sconnect_object\" \"sentinel\" {\n  yaml_body = %q\n  %s\n}\n",
		fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns), conn)
}

// applyStarts are the resources the engine began to apply: any managed
// resource, and data sources read after the plan (a read deferred to apply).
// A data source read before the plan's summary is part of the plan.
func applyStarts(output string) []string {
	var out []string
	planned := false
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Type string `json:"type"`
			Hook struct {
				Resource struct {
					Addr string `json:"addr"`
				} `json:"resource"`
			} `json:"hook"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Type {
		case "change_summary":
			planned = true
		case "apply_start":
			if planned || !strings.HasPrefix(line.Hook.Resource.Addr, "data.") {
				out = append(out, line.Hook.Resource.Addr)
			}
		}
	}
	return out
}

var spaces = regexp.MustCompile(`\s+`)

func flat(s string) string { return spaces.ReplaceAllString(strings.TrimSpace(s), " ") }

func hasError(r acctest.Result, want []string) bool {
	for _, d := range r.Errors() {
		text := flat(d.Summary + " " + d.Detail)
		all := true
		for _, w := range want {
			all = all && strings.Contains(text, flat(w))
		}
		if all {
			return true
		}
	}
	return false
}

func describe(r acctest.Result) string {
	var b strings.Builder
	for _, d := range r.Errors() {
		fmt.Fprintf(&b, "  - %s: %s\n", d.Summary, flat(d.Detail))
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}

// nothing: the case declares no object of its own (a patch, whose target
// exists and is checked as untouched).
func nothing(*env) []ref { return nil }

func clusterRole(e *env) []ref { return []ref{{clusterRoles, "", e.Name}} }

func badCases(cluster *localcluster.Cluster) []badCase {
	cm := func(body func(e *env) string, attrs ...string) func(e *env) string {
		return func(e *env) string { return e.object(body(e), attrs...) }
	}
	cmWith := func(extra string, attrs ...string) func(e *env) string {
		return cm(func(e *env) string { return e.cm(extra) }, attrs...)
	}
	fixed := func(body string) func(e *env) string {
		return cm(func(e *env) string { return strings.ReplaceAll(body, "NAME", e.Name) })
	}
	inNS := func(body string) func(e *env) string {
		return cm(func(e *env) string {
			return strings.NewReplacer("NAME", e.Name, "NS", e.NS).Replace(body)
		})
	}
	conn := func(attrs string) func(e *env) string {
		return func(e *env) string { return e.withConn(strings.NewReplacer("HOST", cluster.Host).Replace(attrs)) }
	}
	ca := fmt.Sprintf("%q", string(cluster.CAPEM))
	patch := func(body string) badCase {
		return badCase{setup: (*env).target, config: func(e *env) string { return e.patch(body) }, absent: nothing}
	}
	with := func(c badCase, name string, want ...string) badCase {
		c.name, c.want = name, want
		return c
	}

	return []badCase{
		// k8sconnect_object: yaml_body
		{name: "yaml empty", config: fixed(""), want: []string{"yaml_body is empty", "exactly one Kubernetes object"}},
		{name: "yaml comment only", config: fixed("# nothing here yet\n---\n# still nothing\n"), want: []string{"yaml_body is empty"}},
		{name: "yaml two documents", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME-2, namespace: NS}\n"),
			want: []string{"yaml_body holds 2 documents", "Split them with the k8sconnect_yaml_split data source"}},
		{name: "yaml not yaml", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS\ndata: [unclosed\n"),
			want: []string{"yaml_body is not valid YAML", "line"}},
		{name: "yaml a list", config: inNS("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: NAME, namespace: NS}\n"),
			want: []string{"yaml_body must be a YAML mapping", "not a list"}},
		{name: "yaml a scalar", config: fixed("just some text\n"), want: []string{"yaml_body must be a YAML mapping"}},
		{name: "missing apiVersion", config: inNS("kind: ConfigMap\nmetadata: {name: NAME, namespace: NS}\n"), want: []string{"yaml_body is missing apiVersion"}},
		{name: "missing kind", config: inNS("apiVersion: v1\nmetadata: {name: NAME, namespace: NS}\n"), want: []string{"yaml_body is missing kind"}},
		{name: "missing metadata.name", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: NS, labels: {case: NAME}}\n"),
			want: []string{"yaml_body is missing metadata.name"}},
		{name: "generateName", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: NAME-, namespace: NS}\n"),
			want: []string{"metadata.generateName", "needs a fixed metadata.name"}},
		{name: "status", config: cmWith("status: {phase: Active}\n"), want: []string{"yaml_body sets status", "remove it", "k8sconnect_wait"}},
		{name: "metadata.uid", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS, uid: 0e3a8a36-2d4b-4b63-8a53-8e2ef4a2ad65}\n"),
			want: []string{"yaml_body sets metadata.uid, which the API server owns; remove it"}},
		{name: "metadata.resourceVersion", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS, resourceVersion: \"123\"}\n"),
			want: []string{"metadata.resourceVersion, which the API server owns; remove it", "kubectl get -o yaml"}},
		{name: "metadata.managedFields", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\n  namespace: NS\n  managedFields: [{manager: kubectl, operation: Apply}]\n"),
			want: []string{"metadata.managedFields, which the API server owns; remove it"}},
		{name: "metadata.creationTimestamp", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS, creationTimestamp: \"2024-01-01T00:00:00Z\"}\n"),
			want: []string{"metadata.creationTimestamp, which the API server owns; remove it"}},
		{name: "unknown field", config: cmWith("data: {a: b}\nspecification: {}\n"),
			want: []string{`unknown field "specification"`, "Check its spelling, its indentation and the apiVersion"}},
		{name: "unknown nested field", config: fixed("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: NAME}\nspec:\n  replicaz: 2\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec: {containers: [{name: x, image: x}]}\n"),
			want:   []string{"unknown field", "replicaz", "Check its spelling"},
			absent: func(e *env) []ref { return []ref{{deployments, "default", e.Name}} }},
		{name: "wrong type", config: cmWith("data: [a, b]\n"), want: []string{`yaml_body field "data" must be a map in ConfigMap`}},
		{name: "namespace on a cluster-scoped kind", config: inNS("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: NAME, namespace: NS}\nrules: []\n"),
			want: []string{"ClusterRole is cluster-scoped", "sets metadata.namespace", "remove it"}, absent: clusterRole},
		{name: "invalid name", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_NAME, namespace: NS}\n"),
			want: []string{"metadata.name", "Invalid value", "RFC 1123"},
			absent: func(e *env) []ref {
				return []ref{{configMaps, e.NS, "Bad_" + e.Name}, {configMaps, e.NS, "bad-" + e.Name}}
			}},
		{name: "invalid label value", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\n  namespace: NS\n  labels: {team: \"two words\"}\n"),
			want: []string{"metadata.labels", "Invalid value", "two words"}},
		{name: "invalid label key", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\n  namespace: NS\n  labels: {\"-bad/key\": x}\n"),
			want: []string{"metadata.labels", "Invalid value"}},
		{name: "deployment selector does not match template", config: inNS("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: NAME, namespace: NS}\nspec:\n  selector: {matchLabels: {app: one}}\n  template:\n    metadata: {labels: {app: two}}\n    spec: {containers: [{name: web, image: nginx}]}\n"),
			want:   []string{"selector", "does not match template"},
			absent: func(e *env) []ref { return []ref{{deployments, e.NS, e.Name}} }},
		{name: "yaml duplicate key", config: inNS("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS}\ndata: {a: b}\ndata: {c: d}\n"),
			want: []string{"yaml_body is not valid YAML", `mapping key "data" already defined`}},
		{name: "kind typo in the core group", config: inNS("apiVersion: v1\nkind: ConfigMapp\nmetadata: {name: NAME, namespace: NS}\n"),
			want: []string{`kind "ConfigMapp" in apiVersion "v1"`, "check the spelling"}},
		{name: "core kind in a version that does not exist", config: inNS("apiVersion: v2\nkind: ConfigMap\nmetadata: {name: NAME, namespace: NS}\n"),
			want: []string{`kind "ConfigMap" in apiVersion "v2"`, "check the spelling"}},
		{name: "object exists and is not managed", setup: (*env).target, config: cmWith("data: {a: mine}\n"),
			want:   []string{"already exists in the cluster and k8sconnect does not manage it", "k8sconnect_patch"},
			absent: nothing},

		// k8sconnect_object: ignore_fields and delete_timeout
		{name: "ignore_fields bad path", config: cmWith("data: {a: b}\n", `ignore_fields = ["data..x"]`), want: []string{"Invalid ignore_fields entry", "empty field name"}},
		{name: "ignore_fields unclosed selector", config: cmWith("data: {a: b}\n", `ignore_fields = ["spec.containers[name=app"]`), want: []string{"Invalid ignore_fields entry"}},
		{name: "ignore_fields metadata.name", config: cmWith("data: {a: b}\n", `ignore_fields = ["metadata.name"]`),
			want: []string{"metadata.name identifies the object and cannot be ignored"}},
		{name: "ignore_fields kind", config: cmWith("data: {a: b}\n", `ignore_fields = ["kind"]`), want: []string{"kind identifies the object and cannot be ignored"}},
		{name: "ignore_fields apiVersion", config: cmWith("data: {a: b}\n", `ignore_fields = ["apiVersion"]`), want: []string{"apiVersion identifies the object and cannot be ignored"}},
		{name: "ignore_fields metadata.namespace", config: cmWith("data: {a: b}\n", `ignore_fields = ["metadata.namespace"]`),
			want: []string{"metadata.namespace identifies the object and cannot be ignored"}},
		{name: "delete_timeout not a duration", config: cmWith("data: {a: b}\n", `delete_timeout = "forever"`),
			want: []string{`"forever" is not a positive duration; use a form such as "90s"`}},
		{name: "delete_timeout negative", config: cmWith("data: {a: b}\n", `delete_timeout = "-5m"`), want: []string{`"-5m" is not a positive duration`}},

		// cluster_connection
		{name: "kubeconfig_file missing", config: conn(`kubeconfig_file = "/nonexistent/kubeconfig"`),
			want: []string{`cluster_connection.kubeconfig_file "/nonexistent/kubeconfig" cannot be read: no such file`}},
		{name: "kubeconfig and kubeconfig_file", config: conn(fmt.Sprintf("kubeconfig = file(%q)\n    kubeconfig_file = %q", cluster.KubeconfigPath, cluster.KubeconfigPath)),
			want: []string{"sets both kubeconfig and kubeconfig_file; set only one of them"}},
		{name: "unknown context", config: conn(fmt.Sprintf("kubeconfig_file = %q\n    context = \"prod\"", cluster.KubeconfigPath)),
			want: []string{`cluster_connection.context "prod" is not in the kubeconfig file`, "it has: ", localcluster.TokenContext}},
		{name: "kubeconfig not a kubeconfig", config: conn(`kubeconfig = "this: [is not"`), want: []string{"cluster_connection.kubeconfig is not a valid kubeconfig"}},
		{name: "no host and no kubeconfig", config: conn(`token = "abc"`), want: []string{"cluster_connection needs kubeconfig, kubeconfig_file or host"}},
		{name: "ca not PEM", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = \"not a certificate\"\n    token = \"x\""),
			want: []string{"cluster_connection.cluster_ca_certificate must be PEM or base64-encoded PEM"}},
		{name: "ca of another cluster", config: conn(fmt.Sprintf("host = \"HOST\"\n    cluster_ca_certificate = %q\n    token = %q", string(cluster.ClientCertPEM), cluster.Token)),
			want: []string{"x509", "cluster_ca_certificate"}},
		{name: "client_certificate not PEM", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    client_certificate = \"abc\"\n    client_key = \"def\""),
			want: []string{"cluster_connection.client_certificate must be PEM or base64-encoded PEM"}},
		{name: "proxy_url not a URL", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    proxy_url = \"proxy:3128\""),
			want: []string{"cluster_connection.proxy_url is not a URL such as http://proxy:3128"}},
		{name: "proxy_url scheme", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    proxy_url = \"ftp://proxy:21\""),
			want: []string{`cluster_connection.proxy_url scheme "ftp" is not supported; use http, https or socks5`}},
		{name: "exec command not found", config: conn("host = \"HOST\"\n    cluster_ca_certificate = " + ca + "\n    exec = { api_version = \"client.authentication.k8s.io/v1\", command = \"/nonexistent/get-token\" }"),
			want: []string{"/nonexistent/get-token", "no such file", "Check that its command is installed and on PATH"}},
		{name: "host not a URL", config: conn("host = \"https://exa mple.com:6443\"\n    cluster_ca_certificate = " + ca + "\n    token = \"x\""),
			want: []string{"cluster_connection", "host"}},
		{name: "host refuses connections", config: conn("host = \"https://127.0.0.1:1\"\n    cluster_ca_certificate = " + ca + "\n    token = \"x\""),
			want: []string{"Cannot confirm which cluster this is", "connection refused", "Check cluster_connection.host"}},
		{name: "host unknown", config: conn("host = \"https://k8sconnect-no-such-cluster.invalid:6443\"\n    cluster_ca_certificate = " + ca + "\n    token = \"x\""),
			want: []string{"k8sconnect-no-such-cluster.invalid", "Check cluster_connection.host"}},
		{name: "token refused", config: conn("host = \"HOST\"\n    cluster_ca_certificate = " + ca + "\n    token = \"expired-token\""),
			want: []string{"401 Unauthorized", "Renew it"}},
		{name: "exec without command", config: conn("host = \"HOST\"\n    cluster_ca_certificate = " + ca + "\n    exec = { api_version = \"client.authentication.k8s.io/v1\", command = \"\" }"),
			want: []string{"cluster_connection.exec.command is required"}},
		{name: "request_timeout not a duration", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    request_timeout = \"20\""),
			want: []string{"Invalid cluster_connection", `cluster_connection.request_timeout "20" is not a positive duration; use a form such as "90s"`}},
		{name: "request_timeout zero", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    request_timeout = \"0s\""),
			want: []string{`cluster_connection.request_timeout "0s" is not a positive duration`}},
		{name: "cluster_id empty", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    cluster_id = \"\""),
			want: []string{"Invalid cluster_connection", "cluster_connection.cluster_id string length must be between 1 and 256"}},
		{name: "cluster_id with a space", config: conn(`host = "HOST"` + "\n    cluster_ca_certificate = " + ca + "\n    token = \"x\"\n    cluster_id = \"prod eu\""),
			want: []string{"Invalid cluster_connection", "cluster_connection.cluster_id must be made of letters, digits", "got: prod eu"}},

		// k8sconnect_patch
		with(patch(`take_ownership = true`), "patch without content", "No attribute specified when one (and only one) of [patch,patch_wo,merge_patch,merge_patch_wo,json_patch,json_patch_wo] is required"),
		with(patch("patch = \"data: {a: b}\"\n  merge_patch = \"data: {a: c}\"\n  take_ownership = true"), "patch with two contents", "Invalid Attribute Combination", "2 attributes specified when one (and only one) of [patch,patch_wo,merge_patch,merge_patch_wo,json_patch,json_patch_wo] is required"),
		with(patch(`patch = "data: {a: b}"`), "patch take_ownership missing", "take_ownership", "required"),
		with(patch("patch = \"data: {a: b}\"\n  take_ownership = false"), "patch take_ownership false", "take_ownership must be true", "Set take_ownership = true"),
		with(patch("json_patch = jsonencode({ op = \"add\", path = \"/data/x\", value = \"y\" })\n  take_ownership = true"), "json_patch not an array",
			"json_patch must be a JSON array of operations"),
		with(patch("json_patch = \"[]\"\n  take_ownership = true"), "json_patch empty", "json_patch has no operations"),
		with(patch("json_patch = jsonencode([{ op = \"add\", value = \"x\" }])\n  take_ownership = true"), "json_patch op without path", "json_patch operation 0 (add) needs a path"),
		with(patch("json_patch = jsonencode([{ op = \"replace\", path = \"/data/a\" }])\n  take_ownership = true"), "json_patch op without value", "json_patch operation 0 (replace) needs a value"),
		with(patch("json_patch = jsonencode([{ op = \"upsert\", path = \"/data/a\", value = \"x\" }])\n  take_ownership = true"), "json_patch unknown op",
			`json_patch operation 0: op "upsert" is not one of add, remove, replace, move, copy, test`),
		with(patch("json_patch = jsonencode([{ path = \"/data/a\", value = \"x\" }])\n  take_ownership = true"), "json_patch without op", "json_patch operation 0 has no op"),
		with(patch("json_patch = jsonencode([{ op = \"move\", path = \"/data/b\" }])\n  take_ownership = true"), "json_patch move without from", "json_patch operation 0 (move) needs from"),
		with(patch("json_patch = jsonencode([{ op = \"add\", path = \"data/x\", value = \"y\" }])\n  take_ownership = true"), "json_patch pointer without slash",
			`path "data/x" must start with / (a JSON Pointer)`),
		with(patch("json_patch = jsonencode([{ op = \"add\", path = \"/status/x\", value = 1 }])\n  take_ownership = true"), "json_patch status",
			"json_patch operation 0 changes status, which the object's controller owns"),
		with(patch("json_patch = jsonencode([{ op = \"replace\", path = \"/metadata/resourceVersion\", value = \"1\" }])\n  take_ownership = true"), "json_patch resourceVersion",
			"changes metadata.resourceVersion, which the API server owns"),
		with(patch("patch = \"data: [unclosed\"\n  take_ownership = true"), "patch not yaml", "patch is not valid YAML or JSON"),
		with(patch("patch = \"status: {phase: x}\"\n  take_ownership = true"), "patch status", "patch sets status", "patch spec or metadata instead"),
		with(patch("merge_patch = \"metadata: {uid: abc}\"\n  take_ownership = true"), "merge_patch metadata.uid", "merge_patch sets metadata.uid, which the API server owns"),
		with(patch("merge_patch = \"[1, 2]\"\n  take_ownership = true"), "merge_patch not an object", "merge_patch must be", "object"),
		with(patch("merge_patch = \"{}\"\n  take_ownership = true"), "merge_patch empty", "merge_patch is empty: give the fields to set"),
		with(patch("patch = \"spec: {replicas: 2}\"\n  take_ownership = true"), "patch unknown field", "spec", "rejected"),
		{name: "patch target kind typo", setup: (*env).target, absent: nothing,
			config: func(e *env) string {
				return fmt.Sprintf("resource \"k8sconnect_patch\" \"bad\" {\n  target = { api_version = \"v1\", kind = \"Configmap\", name = %q, namespace = %q }\n  patch = \"data: {a: b}\"\n  take_ownership = true\n  %s\n}\n", e.Name, e.NS, e.Conn)
			},
			want: []string{`kind "Configmap" in apiVersion "v1"`, "check the spelling"}},
		with(patch("patch = \"kind: Secret\\ndata: {a: b}\"\n  take_ownership = true"), "patch kind mismatch",
			`patch sets kind "Secret" but target.kind is "ConfigMap"; leave kind out of the patch`),
		with(patch("patch = \"metadata: {name: other}\\ndata: {a: b}\"\n  take_ownership = true"), "patch name mismatch",
			`patch sets metadata.name "other" but target.name is`, "leave it out of the patch"),
		{name: "patch namespaced target without namespace", setup: (*env).target,
			config: func(e *env) string {
				return fmt.Sprintf("resource \"k8sconnect_patch\" \"bad\" {\n  target = { api_version = \"v1\", kind = \"ConfigMap\", name = %q }\n  patch = \"data: {a: b}\"\n  take_ownership = true\n  %s\n}\n", e.Name, e.Conn)
			},
			want:   []string{"target.namespace is required", "ConfigMap is a namespaced kind; set target.namespace"},
			absent: func(e *env) []ref { return []ref{{configMaps, "default", e.Name}} }},
		{name: "patch cluster-scoped target with namespace",
			setup: func(e *env) {
				cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: e.Name}}
				out, err := acctest.Clientset(e.t).RbacV1().ClusterRoles().Create(context.Background(), cr, metav1.CreateOptions{FieldManager: "tool"})
				if err != nil {
					e.t.Fatal(err)
				}
				e.t.Cleanup(func() {
					_ = acctest.Clientset(e.t).RbacV1().ClusterRoles().Delete(context.Background(), e.Name, metav1.DeleteOptions{})
				})
				e.untouched[ref{clusterRoles, "", e.Name}] = out.ResourceVersion
			},
			config: func(e *env) string {
				return fmt.Sprintf("resource \"k8sconnect_patch\" \"bad\" {\n  target = { api_version = \"rbac.authorization.k8s.io/v1\", kind = \"ClusterRole\", name = %q, namespace = %q }\n  patch = \"metadata: {labels: {a: b}}\"\n  take_ownership = true\n  %s\n}\n", e.Name, e.NS, e.Conn)
			},
			want:   []string{"target.namespace must be empty", "ClusterRole is cluster-scoped; remove target.namespace"},
			absent: nothing},

		// k8sconnect_wait
		{name: "wait no mode", config: func(e *env) string { return e.wait(`{ timeout = "1m" }`) },
			want: []string{"Nothing to wait for", "Set exactly one of wait_for.field, wait_for.field_value, wait_for.condition, wait_for.rollout = true or wait_for.ready = true"}},
		{name: "wait two modes", config: func(e *env) string { return e.wait(`{ condition = "Ready", field = "status.phase" }`) },
			want: []string{"More than one thing to wait for", "use one k8sconnect_wait for each"}},
		{name: "wait timeout not a duration", config: func(e *env) string { return e.wait(`{ condition = "Ready", timeout = "ten minutes" }`) },
			want: []string{`"ten minutes" is not a duration; write it like "90s"`}},
		{name: "wait timeout zero", config: func(e *env) string { return e.wait(`{ condition = "Ready", timeout = "0s" }`) },
			want: []string{"timeout must be positive", "leave it out for the default"}},
		{name: "wait bad field path", config: func(e *env) string { return e.wait(`{ field = "status..phase" }`) },
			want: []string{"Invalid field", "empty field name"}},
		{name: "wait bad field_value path", config: func(e *env) string { return e.wait(`{ field_value = { "status[0" = "x" } }`) },
			want: []string{"Invalid field_value"}},
		{name: "wait empty field_value", config: func(e *env) string { return e.wait(`{ field_value = {} }`) },
			want: []string{"field_value needs at least one field"}},
		{name: "wait empty condition", config: func(e *env) string { return e.wait(`{ condition = "" }`) },
			want: []string{"condition is a condition type such as Ready or Complete; it cannot be empty"}},
		{name: "wait rollout of a ConfigMap", config: func(e *env) string { return e.wait(`{ rollout = true }`) },
			want: []string{"ConfigMap (v1) has no rollout", "Wait for a condition or a field instead"}},

		// data sources
		{name: "yaml_split content and pattern", config: func(e *env) string {
			return e.split(fmt.Sprintf("content = %q\n  pattern = \"*.yaml\"", e.cm("")))
		}, want: []string{"Set only one of content, pattern or kustomize_path."}},
		{name: "yaml_split no input", config: func(e *env) string { return e.split("") },
			want: []string{"Set one of content, pattern or kustomize_path."}},
		{name: "yaml_split invalid yaml", config: func(e *env) string {
			return e.split(fmt.Sprintf("content = %q", e.cm("")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n  bad: [\n"))
		}, want: []string{"content document 2", "is not valid YAML"}},
		{name: "yaml_split pattern matches no file", config: func(e *env) string {
			return e.split(`pattern = "${path.module}/manifests/*.yaml"`)
		}, want: []string{"matched no files", `use "${path.module}/..." for files beside the configuration`}},
		{name: "yaml_split pattern empty", config: func(e *env) string { return e.split(`pattern = ""`) },
			want: []string{"pattern must not be empty"}},
		{name: "yaml_split kustomize_path missing", config: func(e *env) string {
			return e.split(`kustomize_path = "${path.module}/overlays/prod"`)
		}, want: []string{"kustomize_path", "overlays/prod"}},
		{name: "yaml_split kustomize_path a file",
			setup: func(e *env) { e.file("kustomization.yaml", "resources: []\n") },
			config: func(e *env) string {
				return e.split(`kustomize_path = "${path.module}/kustomization.yaml"`)
			}, want: []string{"is a file; it must be the directory that holds kustomization.yaml"}},
		{name: "yaml_split defined twice", config: func(e *env) string {
			return e.split(fmt.Sprintf("content = %q", e.cm("")+"---\n"+e.cm("data: {a: b}\n")))
		}, want: []string{"is defined twice: in content document 1"}},
		{name: "yaml_split document missing kind",
			setup: func(e *env) {
				e.file("manifests/app.yaml", e.cm("")+"---\napiVersion: v1\nmetadata: {name: x}\n")
			},
			config: func(e *env) string { return e.split(`pattern = "${path.module}/manifests/*.yaml"`) },
			want:   []string{"app.yaml document 2", "is missing kind"}},
		{name: "yaml_scoped content and kustomize_path", config: func(e *env) string {
			return e.scoped(fmt.Sprintf("content = %q\n  kustomize_path = \"${path.module}\"", e.cm("")))
		}, want: []string{"Set only one of content, pattern or kustomize_path."}},
		{name: "yaml_scoped no input", config: func(e *env) string { return e.scoped("") },
			want: []string{"Set one of content, pattern or kustomize_path."}},
		{name: "yaml_scoped invalid yaml", config: func(e *env) string {
			return e.scoped(fmt.Sprintf("content = %q", e.cm("")+"---\nkind: [\n"))
		}, want: []string{"content document 2", "is not valid YAML"}},
		{name: "yaml_scoped pattern matches no file", config: func(e *env) string {
			return e.scoped(`pattern = "${path.module}/crds/**/*.yaml"`)
		}, want: []string{"matched no files"}},
		{name: "yaml_scoped unknown kind without connection", config: func(e *env) string {
			return e.scoped(fmt.Sprintf("content = %q", e.cm("")+"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"))
		}, want: []string{"the scope of kind Widget", "Set cluster_connection so the cluster's discovery tells the scope"}},
		{name: "object data source not found", config: func(e *env) string {
			return fmt.Sprintf("data \"k8sconnect_object\" \"bad\" {\n  api_version = \"v1\"\n  kind = \"ConfigMap\"\n  name = %q\n  namespace = %q\n  %s\n}\n"+
				"resource \"k8sconnect_object\" \"copy\" {\n  yaml_body = replace(data.k8sconnect_object.bad.yaml_body, %q, %q)\n  %s\n}\n",
				e.Name+"-source", e.NS, e.Conn, e.Name+"-source", e.Name, e.Conn)
		}, want: []string{"-source does not exist in the cluster"}},
		{name: "object data source unknown kind", config: func(e *env) string {
			return fmt.Sprintf("data \"k8sconnect_object\" \"bad\" {\n  api_version = \"example.com/v1\"\n  kind = \"Widget\"\n  name = %q\n  %s\n}\n", e.Name, e.Conn)
		}, want: []string{"The cluster does not serve example.com/v1 Widget"}},
		{name: "object data source empty name", config: func(e *env) string {
			return fmt.Sprintf("data \"k8sconnect_object\" \"bad\" {\n  api_version = \"v1\"\n  kind = \"ConfigMap\"\n  name = \"\"\n  namespace = %q\n  %s\n}\n", e.NS, e.Conn)
		}, want: []string{"name"}},
		{name: "helm_template template error",
			setup: func(e *env) {
				e.helmChart("", map[string]string{"broken.yaml": "# a comment\nkind: {{ .Values.missing.deeper }}\n"})
			},
			config: func(e *env) string { return e.helm("") },
			want:   []string{"Chart not rendered", "bad/templates/broken.yaml:2:", "nil pointer evaluating", "missing.deeper"}},
		{name: "helm_template values against values.schema.json",
			setup:  func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string { return e.helm(`set = [{ name = "replicas", value = "many", type = "string" }]`) },
			want:   []string{"values don't meet the specifications of the schema", "/replicas", "want integer"}},
		{name: "helm_template chart not found",
			config: func(e *env) string { return e.helm("") },
			want:   []string{"Chart not loaded", "not found", "a chart in a repository needs `repository` set"}},
		{name: "helm_template set type unknown",
			setup:  func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string { return e.helm(`set = [{ name = "replicas", value = "2", type = "number" }]`) },
			want:   []string{"set[0].type", "auto", "literal"}},
		{name: "helm_template values not a map",
			setup:  func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string { return e.helm(`values = ["- replicas\n- 2\n"]`) },
			want:   []string{"values[0] is not a YAML map of values"}},
		{name: "helm_template dependency repository url not a URL",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm(`dependency_repositories = [{ url = "charts.example.com/private" }]`)
			},
			want: []string{"Invalid dependency repository URL",
				`"charts.example.com/private" is not an http://, https:// or oci:// URL with a host`}},
		{name: "helm_template dependency repository url with credentials",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm(`dependency_repositories = [{ url = "https://reader:hunter22@charts.example.com/private" }]`)
			},
			want: []string{`"https://charts.example.com/private" has credentials in it: give them as username and password`}},
		{name: "helm_template dependency repository password without username",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm(`dependency_repositories = [{ url = "oci://registry.example.com", password = "hunter22" }]`)
			},
			want: []string{`"dependency_repositories[0].username" must be specified when "dependency_repositories[0].password" is specified`}},
		{name: "helm_template dependency repository twice",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm(`dependency_repositories = [{ url = "https://charts.example.com/a" }, { url = "https://CHARTS.example.com:443/a/" }]`)
			},
			want: []string{"Duplicate dependency repository", `"https://CHARTS.example.com:443/a/" is the url of dependency_repositories[0] already`}},
		{name: "helm_template dependency registry twice, default port written once",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm(`dependency_repositories = [{ url = "oci://registry.example.com" }, { url = "oci://registry.example.com:443/" }]`)
			},
			want: []string{"Duplicate dependency repository", `"oci://registry.example.com:443/" is the url of dependency_repositories[0] already`}},
		{name: "helm_template dependency registry twice, plain HTTP's default port written once",
			setup: func(e *env) { e.helmChart("", nil) },
			config: func(e *env) string {
				return e.helm("plain_http = true\n  " +
					`dependency_repositories = [{ url = "oci://registry.example.com" }, { url = "oci://registry.example.com:80" }]`)
			},
			want: []string{"Duplicate dependency repository", `"oci://registry.example.com:80" is the url of dependency_repositories[0] already`}},
		{name: "helm_template kubeVersion not met",
			setup:  func(e *env) { e.helmChart("kubeVersion: \"<1.10.0\"\n", nil) },
			config: func(e *env) string { return e.helm("") },
			want:   []string{"chart bad requires kubeVersion <1.10.0, which Kubernetes v1."}},
		{name: "helm_template renders invalid YAML",
			setup: func(e *env) {
				e.helmChart("", map[string]string{"list.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n"})
			},
			config: func(e *env) string { return e.helm("") },
			want:   []string{"bad/templates/list.yaml"}},
		{name: "helm_template renders one object twice",
			setup: func(e *env) {
				e.helmChart("", map[string]string{"again.yaml": e.cm("data: {again: \"yes\"}\n")})
			},
			config: func(e *env) string { return e.helm("") },
			want:   []string{"is defined twice", "bad/templates/again.yaml document 1", "bad/templates/configmap.yaml document 1"}},
		{name: "object data source kubeconfig_file missing", config: func(e *env) string {
			return fmt.Sprintf("data \"k8sconnect_object\" \"bad\" {\n  api_version = \"v1\"\n  kind = \"ConfigMap\"\n  name = %q\n  namespace = %q\n  cluster_connection = { kubeconfig_file = \"/nonexistent/kubeconfig\" }\n}\n", e.Name, e.NS)
		}, want: []string{`kubeconfig_file "/nonexistent/kubeconfig" cannot be read`}},
	}
}
