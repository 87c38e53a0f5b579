package object_test

// A sustained fault, as a user behind a dead link meets it: the plan fails,
// and within the budget its error states (cluster_connection.request_timeout),
// client-go's own retries included. Each timed run is measured against a
// healthy run of the same configuration, so that what is bounded is the
// provider's waiting, not the engine's start-up on a busy machine.
//
// Run with: go test ./provider/object -run TestAccBudget -v (and K8SCONNECT_ENGINE=tofu).

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/testing/pki"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
)

// testBudget is the request_timeout of these tests: short, so that they are
// quick, and long beside the engine's own jitter.
const testBudget = 5 * time.Second

// configMapsWithin is configMapsVia with a request_timeout, and a CA of the
// caller's choice.
func configMapsWithin(n int, prefix, ns, host string, caPEM []byte, token string, budget time.Duration) string {
	return fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  count = %d
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s${count.index}
      namespace: %s
    data:
      greeting: hello
  YAML
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
    request_timeout        = %q
  }
}
`, n, prefix, ns, host, string(caPEM), token, budget.String())
}

// timedRun runs one command and says how long it took.
func timedRun(t *testing.T, what string, run func() acctest.Result) (acctest.Result, time.Duration) {
	t.Helper()
	begin := time.Now()
	r := run()
	took := time.Since(begin)
	t.Logf("%s %s: %v in %s", acctest.Engine(), what, r.Err, took.Round(100*time.Millisecond))
	return r, took
}

// expectNoAnswerWithin checks that r failed with an error that says the API
// server did not answer and names the budget, and no later than healthy (the
// same run without a fault) plus bound.
func expectNoAnswerWithin(t *testing.T, w *acctest.Workdir, r acctest.Result, took, healthy, bound time.Duration, parts ...string) {
	t.Helper()
	w.MustFail(r, "plan")
	for _, d := range r.Errors() {
		t.Logf("  error: %s: %s", d.Summary, d.Detail)
	}
	want := append([]string{"no answer from the API server", "tried for up to " + testBudget.String() + " (cluster_connection.request_timeout)"}, parts...)
	if !r.HasError(want...) {
		t.Errorf("no error says all of %q", want)
	}
	// schedulingNoise: on a loaded 2-core CI machine two runs of one
	// engine differ by this much with no fault at all (measured: a failing
	// run 6.9 s against a healthy 1.4 s and a 5 s budget, while the same
	// test alone fails in 5.4 s). What this bounds is minutes against
	// seconds; the logged figure is the measurement.
	const schedulingNoise = time.Second
	if took > healthy+bound+schedulingNoise {
		t.Errorf("the plan failed after %s: a healthy one took %s, and the budget allows %s more", took.Round(100*time.Millisecond),
			healthy.Round(100*time.Millisecond), bound)
	}
}

// An API server behind a link that resets every connection: a plan of one
// object in state fails within the budget and 10%, where it took 464 s
// against a budget of 20 s, client-go sending each read again ten times.
func TestAccBudget_resetLinkFailsAPlanWithinTheBudget(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("reset") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(configMapsWithin(1, prefix, ns, proxy.URL, proxy.CAPEM, cluster.Token, testBudget))
	w.Cleanup()
	w.MustApply()
	_, healthy := timedRun(t, "plan (healthy)", w.Plan)

	fault := proxy.Inject(faultproxy.Rule{Action: faultproxy.Reset})
	t.Cleanup(fault.Remove) // before the destroy: cleanups run in reverse
	r, took := timedRun(t, "plan (every connection reset)", w.Plan)
	acctest.ExpectActed(t, fault)
	expectNoAnswerWithin(t, w, r, took, healthy, testBudget+testBudget/10, "the connection was reset")
}

// The same link, a plan of 200 new objects at the engine's default
// parallelism (10): within twice the budget, not one budget per wave of ten.
func TestAccBudget_resetLinkFailsAPlanOf200WithinTwiceTheBudget(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("reset") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(configMapsWithin(200, prefix, ns, proxy.URL, proxy.CAPEM, cluster.Token, testBudget))
	r, healthy := timedRun(t, "plan of 200 (healthy)", func() acctest.Result { return w.Run("plan", "-input=false", "-json", "-parallelism=10") })
	if add, _, _ := r.Changes(); r.Err != nil || add != 200 {
		t.Fatalf("the healthy plan: want +200, have +%d (%v)\n%s", add, r.Err, r.Output)
	}

	fault := proxy.Inject(faultproxy.Rule{Action: faultproxy.Reset})
	r, took := timedRun(t, "plan of 200 (every connection reset)", func() acctest.Result {
		return w.Run("plan", "-input=false", "-json", "-parallelism=10")
	})
	acctest.ExpectActed(t, fault)
	expectNoAnswerWithin(t, w, r, took, healthy, 2*testBudget)
}

// A link that resets every connection from the moment an apply of a saved
// plan writes: the write, sent and its answer lost, is sent again until the
// connection has answered nothing for the budget, where it was sent again
// for 30 s whatever the budget.
func TestAccBudget_resetLinkFailsAnApplyWithinTheBudget(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("reset") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	config := configMapsWithin(1, prefix, ns, proxy.URL, proxy.CAPEM, cluster.Token, testBudget)
	w.Write(config)
	w.Cleanup()
	w.MustApply()
	savedPlan := func(greeting string) {
		t.Helper()
		w.Write(strings.Replace(config, "greeting: hello", "greeting: "+greeting, 1))
		if r := w.Run("plan", "-input=false", "-out=saved.tfplan"); r.Err != nil {
			t.Fatalf("plan: %v\n%s", r.Err, r.Output)
		}
	}
	applySaved := func() acctest.Result { return w.Run("apply", "-input=false", "-json", "saved.tfplan") }
	savedPlan("bye")
	if r, healthy := timedRun(t, "apply (healthy)", applySaved); r.Err != nil {
		t.Fatalf("the healthy apply took %s and failed: %v\n%s", healthy, r.Err, r.Output)
	}
	savedPlan("again")
	_, healthy := timedRun(t, "plan (healthy)", w.Plan)

	// The outage begins at the write: the apply's reads (the cluster's
	// identity) are answered, its write never.
	fault := proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", prefix+"0"), Action: faultproxy.Reset})
	t.Cleanup(fault.Remove)
	r, took := timedRun(t, "apply (the write's connection reset)", applySaved)
	acctest.ExpectActed(t, fault)
	expectNoAnswerWithin(t, w, r, took, healthy, testBudget+testBudget/10, "apply not confirmed", "the connection was reset")
}

// A link that stops forwarding without breaking (a half-dead proxy or load
// balancer): the stalled read is cut when the budget runs out, not after
// the attempt timeout (75 s), and the error says it stalled.
func TestAccBudget_stalledLinkIsCutAtTheBudget(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("stall") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(configMapsWithin(1, prefix, ns, proxy.URL, proxy.CAPEM, cluster.Token, testBudget))
	w.Cleanup()
	w.MustApply()
	_, healthy := timedRun(t, "plan (healthy)", w.Plan)

	fault := proxy.Inject(faultproxy.Rule{Action: faultproxy.Pause})
	t.Cleanup(fault.Remove)
	r, took := timedRun(t, "plan (every answer held)", w.Plan)
	acctest.ExpectActed(t, fault)
	expectNoAnswerWithin(t, w, r, took, healthy, testBudget+testBudget/10, "no answer within "+testBudget.String()+" (the connection stalled)")
}

// A certificate that the connection's CA did not sign, and an exec plugin
// that fails, are no network trouble that a retry mends: the plan fails at
// once, saying what to check.
func TestAccBudget_misconfiguredConnectionFailsAtOnce(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	otherCA, err := pki.NewCA("not the cluster's CA")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, connection string
		want             []string
	}{
		{"a CA that did not sign the server's certificate",
			fmt.Sprintf("host = %q\n    cluster_ca_certificate = %q\n    token = %q", cluster.Host, string(otherCA.CertPEM), cluster.Token),
			[]string{"x509", "not trusted by this connection's CA", "cluster_ca_certificate"}},
		{"an exec plugin that fails",
			fmt.Sprintf("host = %q\n    cluster_ca_certificate = %q\n    exec = { api_version = \"client.authentication.k8s.io/v1\", command = \"false\" }",
				cluster.Host, string(cluster.CAPEM)),
			[]string{"getting credentials", "exec credential plugin", "failed, so nothing was sent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := acctest.NewWorkdir(t)
			w.Write(fmt.Sprintf("resource \"k8sconnect_object\" \"cm\" {\n  yaml_body = %q\n  cluster_connection = {\n    %s\n  }\n}\n",
				fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", acctest.Name("bad"), ns), tc.connection))
			r, took := timedRun(t, "apply", w.Apply)
			expectFailedAtOnce(t, w, r, took, tc.want...)
		})
	}
}

// The API server's certificate changes to one of another CA in the middle of
// an apply, after the cluster was identified and as the create is sent (a
// load balancer that comes back with another certificate): the create,
// whose connection is cut, is sent again on a new connection, whose
// handshake fails. That is no network trouble that a retry mends; the apply
// fails at once, where ssa.Retry sent it again for 30 s.
func TestAccBudget_untrustedCertificateMidApplyFailsAtOnce(t *testing.T) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	prefix := acctest.Name("rotated") + "-"
	proxy := faultproxy.New(t, cluster.Host, cluster.CAPEM)
	w := acctest.NewWorkdir(t)
	w.Write(configMapsWithin(1, prefix, ns, proxy.URL, proxy.CAPEM, cluster.Token, connection.DefaultRequestTimeout))

	drop := proxy.Inject(faultproxy.Rule{Match: faultproxy.ApplyOf("configmaps", prefix+"0"), Action: faultproxy.Drop, Times: 1})
	rotated := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := drop.WaitHits(ctx, 1); err != nil {
			rotated <- err
			return
		}
		_, err := proxy.RotateCA()
		proxy.CloseConnections()
		rotated <- err
	}()
	r, took := timedRun(t, "apply (the certificate changes as the create is sent)", w.Apply)
	if err := <-rotated; err != nil {
		t.Fatal(err)
	}
	acctest.ExpectActed(t, drop)
	expectFailedAtOnce(t, w, r, took, "x509", "not trusted by this connection's CA")
}

// expectFailedAtOnce checks that r failed with an error that says all of
// want, well under the default budget (20 s), with room for the engine's
// start-up on a busy machine.
func expectFailedAtOnce(t *testing.T, w *acctest.Workdir, r acctest.Result, took time.Duration, want ...string) {
	t.Helper()
	w.MustFail(r, "apply")
	for _, d := range r.Errors() {
		t.Logf("  error: %s: %s", d.Summary, strings.ReplaceAll(d.Detail, "\n", " "))
	}
	if !r.HasError(want...) {
		t.Errorf("no error says all of %q", want)
	}
	if limit := connection.DefaultRequestTimeout / 2; took > limit {
		t.Errorf("the apply failed after %s; a failure no retry mends must fail at once (under %s)",
			took.Round(100*time.Millisecond), limit)
	}
}
