package badinput_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A cluster_connection that cannot become a client is refused, and the
// refusal must not print the connection's credentials. terraform and tofu
// print, under an error attached to an attribute, every source line of that
// attribute's expression: a connection written out in the configuration, its
// token, client key and kubeconfig included, would land in the CI log of
// every failed run. So each resource and data source that takes a
// cluster_connection is run with one that fails to build, its credentials
// written in it or given through variables that are not sensitive, at each
// step that builds a client: the plan; the apply of a connection known only
// then (the engine plans the resource again first); the apply of a wait,
// which builds no client at plan; the refresh, which builds one from the
// connection in state; and a destroy that skips the refresh. Today the
// engines show an attribute's source under the errors of a plan and of a
// refresh only, and only for a top-level attribute (not a wait's
// resource_ref.cluster_connection), and print no variable's value there; the
// other steps and the variables are checked all the same, so that neither a
// new engine version nor a client built elsewhere can open them unnoticed.

// credentials are the secrets one run's connection holds: a bearer token, a
// client key, and the password of a kubeconfig.
type credentials struct {
	token, key, password acctest.SecretValue
}

func newCredentials(token acctest.SecretValue) credentials {
	return credentials{token, acctest.NewSecretValue("key"), acctest.NewSecretValue("password")}
}

func (c credentials) all() []acctest.SecretValue {
	return []acctest.SecretValue{c.token, c.key, c.password}
}

// keyPEM is the client key as a connection holds it: PEM, so that it passes
// for one; without a client certificate it is never used.
func (c credentials) keyPEM() string {
	return "-----BEGIN EC PRIVATE KEY-----\n" + c.key.Plain + "\n-----END EC PRIVATE KEY-----\n"
}

// kubeconfig is a kubeconfig that is not YAML (a bracket is never closed),
// holding the password.
func (c credentials) kubeconfig() string {
	return "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user: {username: admin, password: " +
		c.password.Plain + ", token: [}\n"
}

// spelling is how a configuration gives the credentials: written in the
// connection, or through variables that are not sensitive.
type spelling struct {
	name string
	// token, key and kubeconfig are the HCL expressions of each.
	token, key, kubeconfig func(credentials) string
	// variables declares what the expressions use; env gives their values.
	variables string
	env       func(credentials) map[string]string
}

var spellings = []spelling{
	{name: "written in the connection",
		token:      func(c credentials) string { return fmt.Sprintf("%q", c.token.Plain) },
		key:        func(c credentials) string { return fmt.Sprintf("%q", c.keyPEM()) },
		kubeconfig: func(c credentials) string { return "<<-EOT\n" + indent(c.kubeconfig(), "      ") + "    EOT" },
		env:        func(credentials) map[string]string { return nil },
	},
	{name: "through variables",
		token:      func(credentials) string { return "var.token" },
		key:        func(credentials) string { return "var.client_key" },
		kubeconfig: func(credentials) string { return "var.kubeconfig" },
		variables: "variable \"token\" { type = string }\nvariable \"client_key\" { type = string }\n" +
			"variable \"kubeconfig\" { type = string }\n",
		env: func(c credentials) map[string]string {
			return map[string]string{"TF_VAR_token": c.token.Plain, "TF_VAR_client_key": c.keyPEM(), "TF_VAR_kubeconfig": c.kubeconfig()}
		},
	},
}

func indent(text, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n"+by) + "\n"
}

// failure is one way for a connection not to become a client.
type failure struct {
	name string
	// attrs are the connection's attributes besides token and client_key.
	// In them KUBECONFIG is the kubeconfig's expression, and LATE is late,
	// quoted, or, for a connection known only at apply, the output of a
	// terraform_data that holds it.
	attrs []string
	late  string
	// want is what the error says is wrong.
	want string
}

func failures(cluster *localcluster.Cluster) (ca, host, kubeconfig failure) {
	ca = failure{name: "a CA that is not PEM", late: "not a certificate",
		attrs: []string{fmt.Sprintf("host = %q", cluster.Host), "cluster_ca_certificate = LATE"},
		want:  "cluster_connection.cluster_ca_certificate must be PEM or base64-encoded PEM"}
	host = failure{name: "a host that is not a URL", late: "https://exa mple.com:6443",
		attrs: []string{"host = LATE", fmt.Sprintf("cluster_ca_certificate = %q", string(cluster.CAPEM))},
		want:  `host must be a URL or a host:port pair: "https://exa mple.com:6443"`}
	kubeconfig = failure{name: "a kubeconfig that is not YAML", late: "admin",
		attrs: []string{"kubeconfig = KUBECONFIG", "context = LATE"},
		want:  "cluster_connection.kubeconfig is not a valid kubeconfig"}
	return ca, host, kubeconfig
}

// connection is a cluster_connection object of f's attributes and the
// credentials, spelled by s; late makes it known only at apply.
func connection(f failure, s spelling, c credentials, late bool) string {
	lateValue := fmt.Sprintf("%q", f.late)
	if late {
		lateValue = "terraform_data.late.output"
	}
	r := strings.NewReplacer("LATE", lateValue, "KUBECONFIG", s.kubeconfig(c))
	var b strings.Builder
	b.WriteString("{\n")
	for _, a := range append(append([]string{}, f.attrs...), "token = "+s.token(c), "client_key = "+s.key(c)) {
		b.WriteString("    " + r.Replace(a) + "\n")
	}
	b.WriteString("  }")
	return b.String()
}

// user is one resource or data source taking a cluster_connection.
type user struct {
	address string
	// block declares it in namespace ns, with the connection conn.
	block func(ns, conn string) string
}

func configMap(name, ns string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {a: b}\n", name, ns)
}

var (
	objectResource = user{"k8sconnect_object.leak", func(ns, conn string) string {
		return fmt.Sprintf("resource \"k8sconnect_object\" \"leak\" {\n  yaml_body = %q\n  cluster_connection = %s\n}\n",
			configMap("leak", ns), conn)
	}}
	patchResource = user{"k8sconnect_patch.leak", func(ns, conn string) string {
		return fmt.Sprintf("resource \"k8sconnect_patch\" \"leak\" {\n  target = { api_version = \"v1\", kind = \"ConfigMap\", "+
			"name = \"target\", namespace = %q }\n  patch = \"data: {a: c}\"\n  take_ownership = true\n  cluster_connection = %s\n}\n", ns, conn)
	}}
	releaseResource = user{"k8sconnect_helm_release.leak", func(ns, conn string) string {
		return fmt.Sprintf("resource \"k8sconnect_helm_release\" \"leak\" {\n  name = \"leak\"\n  namespace = %q\n"+
			"  chart = \"${path.module}/chart\"\n  cluster_connection = %s\n}\n", ns, conn)
	}}
	waitResource = user{"k8sconnect_wait.leak", func(ns, conn string) string {
		return fmt.Sprintf("resource \"k8sconnect_wait\" \"leak\" {\n  resource_ref = {\n    api_version = \"v1\"\n    kind = \"ConfigMap\"\n"+
			"    name = \"leak\"\n    namespace = %q\n    cluster_connection = %s\n  }\n  wait_for = { field = \"data.a\", timeout = \"10s\" }\n}\n",
			ns, conn)
	}}
	objectData = user{"data.k8sconnect_object.leak", func(ns, conn string) string {
		return fmt.Sprintf("data \"k8sconnect_object\" \"leak\" {\n  api_version = \"v1\"\n  kind = \"ConfigMap\"\n  name = \"leak\"\n"+
			"  namespace = %q\n  cluster_connection = %s\n}\n", ns, conn)
	}}
	scopedData = user{"data.k8sconnect_yaml_scoped.leak", func(ns, conn string) string {
		return fmt.Sprintf("data \"k8sconnect_yaml_scoped\" \"leak\" {\n  content = %q\n  cluster_connection = %s\n}\n",
			configMap("leak", ns), conn)
	}}
	templateData = user{"data.k8sconnect_helm_template.leak", func(ns, conn string) string {
		return fmt.Sprintf("data \"k8sconnect_helm_template\" \"leak\" {\n  name = \"leak\"\n  namespace = %q\n"+
			"  chart = \"${path.module}/chart\"\n  cluster_connection = %s\n}\n", ns, conn)
	}}
)

// writeChart writes the chart ./chart the Helm resources name: one ConfigMap,
// in the release namespace.
func writeChart(t *testing.T, dir string) {
	t.Helper()
	for name, content := range map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: leak\nversion: 0.1.0\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak-chart}\ndata: {a: b}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// expectRefusedWithoutCredentials checks that a run failed with "Invalid
// cluster_connection" saying want, under the configuration of address unless
// it is "" (at delete the engine shows none), and printed none of the
// credentials.
func expectRefusedWithoutCredentials(t *testing.T, w *acctest.Workdir, r acctest.Result, what, address, want string, secrets ...acctest.SecretValue) {
	t.Helper()
	w.MustFail(r, what)
	out := flat(r.Output)
	parts := []string{"Error: Invalid cluster_connection", flat(want)}
	if address != "" {
		parts = append(parts, "with "+address+",")
	}
	for _, part := range parts {
		if !strings.Contains(out, part) {
			t.Errorf("%s %s: the output lacks %q:\n%s", acctest.Engine(), what, part, r.Output)
		}
	}
	acctest.ExpectAbsent(t, acctest.Engine()+" "+what, r.Output, secrets...)
}

func TestAccConnectionErrorsPrintNoCredentials(t *testing.T) {
	cluster := localcluster.Shared(t)
	ca, host, kubeconfig := failures(cluster)
	type run struct {
		user    user
		failure failure
		// apply runs apply instead of plan; late makes the connection
		// known only at apply.
		apply, late bool
	}
	runs := []run{
		{user: objectResource, failure: ca},
		{user: patchResource, failure: host},
		{user: releaseResource, failure: kubeconfig},
		{user: objectData, failure: kubeconfig},
		{user: scopedData, failure: ca},
		{user: templateData, failure: host},
		{user: objectResource, failure: kubeconfig, apply: true, late: true},
		{user: patchResource, failure: ca, apply: true, late: true},
		{user: releaseResource, failure: host, apply: true, late: true},
		{user: waitResource, failure: ca, apply: true},
	}
	for _, rn := range runs {
		what, when := "plan", "at plan"
		switch {
		case rn.late:
			what, when = "apply", "known only at apply"
		case rn.apply:
			what, when = "apply", "at apply"
		}
		for _, s := range spellings {
			t.Run(fmt.Sprintf("%s, %s %s, credentials %s", rn.user.address, rn.failure.name, when, s.name), func(t *testing.T) {
				t.Parallel()
				c := newCredentials(acctest.NewSecretValue("token"))
				w := acctest.NewWorkdir(t)
				writeChart(t, w.Dir())
				for k, v := range s.env(c) {
					w.SetEnv(k, v)
				}
				config := s.variables + rn.user.block("default", connection(rn.failure, s, c, rn.late))
				if rn.late {
					config += fmt.Sprintf("resource \"terraform_data\" \"late\" {\n  input = %q\n}\n", rn.failure.late)
				}
				w.Write(config)
				var r acctest.Result
				if rn.apply {
					r = w.Run("apply", "-auto-approve", "-input=false", "-no-color")
				} else {
					r = w.Run("plan", "-input=false", "-no-color")
				}
				expectRefusedWithoutCredentials(t, w, r, what, rn.user.address, rn.failure.want, c.all()...)
				if t.Failed() {
					t.Logf("configuration:\n%s", config)
				}
			})
		}
	}

	// A refresh builds its client from the connection in state: a
	// kubeconfig file that went bad after the apply fails the next plan
	// there, before anything is planned.
	for _, u := range []user{objectResource, patchResource, releaseResource} {
		for _, s := range spellings {
			t.Run(u.address+", a kubeconfig_file no longer YAML at refresh, credentials "+s.name, func(t *testing.T) {
				t.Parallel()
				ns := acctest.Namespace(t)
				target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: ns}}
				if _, err := acctest.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), target, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				// The token must work for the apply that comes first: it
				// is the cluster's own.
				c := newCredentials(acctest.SecretValue{Plain: cluster.Token})
				w := acctest.NewWorkdir(t)
				writeChart(t, w.Dir())
				for k, v := range s.env(c) {
					w.SetEnv(k, v)
				}
				file := filepath.Join(w.Dir(), "kubeconfig")
				working := func() {
					acctest.WriteKubeconfig(t, file, "local", map[string]acctest.KubeContext{"local": {Cluster: cluster}})
				}
				working()
				conn := fmt.Sprintf("{\n    kubeconfig_file = %q\n    token = %s\n    client_key = %s\n  }", file, s.token(c), s.key(c))
				w.Write(s.variables + u.block(ns, conn))
				w.Cleanup()
				w.MustApply()
				if err := os.WriteFile(file, []byte(c.kubeconfig()), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(working) // before the destroy, which reads the file too
				r := w.Run("plan", "-input=false", "-no-color")
				want := fmt.Sprintf("cluster_connection.kubeconfig_file %q is not a valid kubeconfig", file)
				expectRefusedWithoutCredentials(t, w, r, "plan", u.address, want, c.all()...)
				// A destroy that skips the refresh builds it at delete.
				r = w.Run("destroy", "-auto-approve", "-refresh=false", "-input=false", "-no-color")
				expectRefusedWithoutCredentials(t, w, r, "destroy -refresh=false", "", want, c.all()...)
			})
		}
	}
}
