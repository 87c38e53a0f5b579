package object_test

// Every answer an API server can give (docs/adr/0014-server-answers.md),
// given by internal/testing/faultproxy in the real server's place to the one
// request each operation depends on, while everything else reaches the real
// server. For each (operation, answer) the test checks what a user would:
// the exit code; a failure's error names the object and carries a remedy;
// state is kept (the same resources, the same UID and body); the object in
// the cluster is unchanged, or changed once by a run that succeeds; a 429 or
// 503 with Retry-After is sent again after the time it asks for, one
// asking for more than the budget fails at once, and one without it (a load
// balancer's) is sent again at once. Every run has a short budget
// (cluster_connection.request_timeout = answerBudget), so that a reset or a
// stalled connection fails in seconds.
//
// The outcomes make the table in docs/reference.md, between the markers
// below. The test fails when the run observed another table than the one
// committed; K8SCONNECT_UPDATE_DOCS=1 rewrites it.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

const (
	answersBegin = "<!-- answers table: written by TestAccAnswers (provider/object/answers_test.go) -->"
	answersEnd   = "<!-- end of answers table -->"
	// retryAfter is the Retry-After of the 429 and 503 answers, in seconds.
	retryAfter = 1
	// retryAfterPast is a Retry-After longer than the budget, in seconds.
	retryAfterPast = 60
	// answerBudget is every run's cluster_connection.request_timeout.
	answerBudget = 5 * time.Second
)

// apiAnswer is one column: what the proxy answers in the server's place.
type apiAnswer struct {
	name string
	// rules answer the request m selects. A rule for discovery ignores m.
	rules func(m faultproxy.Match) []faultproxy.Rule
	// waits: the answer asks for a retry after retryAfter seconds, and a
	// run must wait that long before sending again, then succeed.
	waits bool
	// resent: the answer says nothing was done (or was cut short), so a run
	// must send the request again and succeed.
	resent bool
	// gone: the answer is the server's word that the object does not exist
	// (its NotFound names the object), so a run may act on it: a refresh
	// drops it from state, a destroy finds it done.
	gone bool
	// quick: a failure must come within the budget (and the engine's own
	// time), not after retries.
	quick bool
	// remedy is a phrase a failure's error must carry.
	remedy string
}

func answerWith(status int, header http.Header, times int) func(faultproxy.Match) []faultproxy.Rule {
	return func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: m, Action: faultproxy.Answer, Status: status, Header: header, Times: times}}
	}
}

// Remedy phrases, from connection.Remedy and the operations' own errors.
const (
	remedyRBAC     = "Check the RBAC rules"
	remedyExpired  = "expired" // Remedy's "probably expired", refresh's "an expired or rotated token?"
	remedyServer   = "Nothing was decided from this answer"
	remedyNetwork  = "The network failed"
	remedyRejected = "faultproxy answered" // the server's own message, which says what it refused
	remedyThrottle = "asked to be sent the request again later than this request could wait"
)

// htmlNotFound is what an ingress or a load balancer in front of the API
// server answers for a path it has no route for.
var htmlNotFound = []byte("<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1><hr>nginx</body></html>")

var apiAnswers = []apiAnswer{
	// An expired token, as the API server answers it.
	{name: "401", rules: answerWith(http.StatusUnauthorized, nil, 0), remedy: remedyExpired},
	{name: "403", rules: answerWith(http.StatusForbidden, nil, 0), remedy: remedyRBAC},
	{name: "404 on discovery", rules: func(faultproxy.Match) []faultproxy.Rule {
		// The core group's discovery (aggregated or not) says there is no
		// such API, while the object itself is still there.
		var rules []faultproxy.Rule
		for _, p := range []string{"/api", "/api/v1"} {
			rules = append(rules, faultproxy.Rule{Match: faultproxy.Match{Method: http.MethodGet, WholePath: p},
				Action: faultproxy.Answer, Status: http.StatusNotFound})
		}
		return rules
	}, remedy: "discover"},
	// The server's own NotFound, naming the object; and the same status from
	// something in front of the server, which names nothing.
	{name: "404 on the object", rules: answerWith(http.StatusNotFound, nil, 0), gone: true},
	{name: "404 from a proxy (HTML)", rules: func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: m, Action: faultproxy.Answer, Status: http.StatusNotFound,
			Header: http.Header{"Content-Type": {"text/html"}}, Body: htmlNotFound}}
	}},
	{name: "409", rules: answerWith(http.StatusConflict, nil, 0), remedy: remedyRejected},
	{name: "410", rules: answerWith(http.StatusGone, nil, 0), remedy: remedyRejected},
	{name: "422", rules: answerWith(http.StatusUnprocessableEntity, nil, 0), remedy: remedyRejected},
	{name: "429 Retry-After", rules: answerWith(http.StatusTooManyRequests,
		http.Header{"Retry-After": {fmt.Sprint(retryAfter)}}, 2), waits: true},
	{name: "500", rules: answerWith(http.StatusInternalServerError, nil, 0), remedy: remedyServer},
	{name: "503 Retry-After", rules: answerWith(http.StatusServiceUnavailable,
		http.Header{"Retry-After": {fmt.Sprint(retryAfter)}}, 2), waits: true},
	// Asking for longer than the budget: no wait, no resend.
	{name: "429 Retry-After past the budget", rules: answerWith(http.StatusTooManyRequests,
		http.Header{"Retry-After": {fmt.Sprint(retryAfterPast)}}, 0), remedy: remedyThrottle, quick: true},
	{name: "503 Retry-After past the budget", rules: answerWith(http.StatusServiceUnavailable,
		http.Header{"Retry-After": {fmt.Sprint(retryAfterPast)}}, 0), remedy: remedyThrottle, quick: true},
	// What a load balancer or gateway in front of the server answers.
	{name: "429, no Retry-After", rules: answerWith(http.StatusTooManyRequests, nil, 2), resent: true},
	{name: "503, no Retry-After", rules: answerWith(http.StatusServiceUnavailable, nil, 2), resent: true},
	{name: "504", rules: answerWith(http.StatusGatewayTimeout, nil, 0), remedy: remedyServer},
	{name: "body cut halfway", rules: func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: m, Action: faultproxy.Truncate, Times: 1}}
	}, remedy: remedyNetwork, resent: true},
	// The connection, not an answer: a TCP reset before the request reaches
	// the server, and a connection that takes the request and never answers.
	{name: "connection reset", rules: func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: m, Action: faultproxy.Reset}}
	}, remedy: remedyNetwork},
	{name: "connection stalled", rules: func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: m, Action: faultproxy.Stall, MaxHold: 2 * time.Minute}}
	}, remedy: remedyNetwork},
	{name: "watch ends early", rules: func(m faultproxy.Match) []faultproxy.Rule {
		return []faultproxy.Rule{{Match: faultproxy.Match{Path: "/configmaps"}, Action: faultproxy.EndWatch}}
	}},
}

// answerEnv is one operation's namespace, proxy and configuration directory,
// shared by its answers, which run one after the other.
type answerEnv struct {
	t       *testing.T
	ns      string
	name    string // the ConfigMap
	proxy   *faultproxy.Proxy
	w       *acctest.Workdir
	cluster *localcluster.Cluster
	// answer is the answer of the run under way.
	answer apiAnswer
	// chart is the release's chart, for the release's rows.
	chart string
}

// snapshot is what a user would compare before and after a run.
type snapshot struct {
	state    []string
	stateUID string
	stateG   string // the greeting in state
	exists   bool
	uid      string
	greeting string
	version  string
}

func (s snapshot) String() string {
	return fmt.Sprintf("state %v (uid %s, greeting %q), cluster exists=%v uid %s greeting %q rv %s",
		s.state, s.stateUID, s.stateG, s.exists, s.uid, s.greeting, s.version)
}

// answerOp is one row: an operation and the request it depends on.
type answerOp struct {
	name string
	// request is the request the answer replaces.
	request func(e *answerEnv) faultproxy.Match
	// setup writes the configuration and brings the object to where the
	// operation starts; reset does so again after a run that changed it.
	setup func(e *answerEnv)
	reset func(e *answerEnv, before snapshot, after snapshot)
	// run runs the operation; step numbers the answers, for a new value.
	run func(e *answerEnv, step int) acctest.Result
	// check asserts the outcome against the snapshots around the run.
	check func(e *answerEnv, ok bool, before, after snapshot, step int) []string
	// resource is the state address; patch: the target is someone else's.
	resource string
}

var greetingLine = regexp.MustCompile(`greeting: ?([^\s}"\\]+)`)

// objectsGreeting finds the greeting in a set's objects attribute (JSON of
// projections).
var objectsGreeting = regexp.MustCompile(`greeting[^A-Za-z0-9]{1,8}([A-Za-z0-9]+)`)

func (e *answerEnv) snap(address string) snapshot {
	e.t.Helper()
	var s snapshot
	s.state = e.w.StateList()
	switch {
	case len(s.state) == 0:
	case strings.HasPrefix(address, "k8sconnect_helm_release.") || strings.HasPrefix(address, "k8sconnect_manifest_set."):
		// A set records no UID of its own; its objects' projections hold
		// the greeting.
		if m := objectsGreeting.FindStringSubmatch(e.w.StateAttribute(address, "objects")); m != nil {
			s.stateG = m[1]
		}
	default:
		s.stateUID = e.w.StateAttribute(address, "uid")
		body := e.w.StateAttribute(address, "yaml_body")
		if address != "k8sconnect_object.cm" {
			body = e.w.StateAttribute(address, "patch")
		}
		if m := greetingLine.FindStringSubmatch(body); m != nil {
			s.stateG = m[1]
		}
	}
	obj, err := acctest.Get(e.t, configMaps, e.ns, e.name)
	if err == nil && obj != nil {
		s.exists = true
		s.uid = string(obj.GetUID())
		s.greeting, _, _ = unstructuredString(obj.Object, "data", "greeting")
		s.version = obj.GetResourceVersion()
	}
	return s
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// objectConfig declares the ConfigMap with greeting, reached through the
// proxy's provider block; extra is appended (an import block).
func (e *answerEnv) objectConfig(greeting, extra string) {
	e.w.Write(e.providerBlock() + fmt.Sprintf(`
resource "k8sconnect_object" "cm" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: %s
      namespace: %s
    data:
      greeting: %s
  YAML
}
%s`, e.name, e.ns, greeting, extra))
}

func (e *answerEnv) providerBlock() string {
	return fmt.Sprintf(`
provider "k8sconnect" {
  cluster_connection = {
    host                   = %q
    cluster_ca_certificate = %q
    token                  = %q
    request_timeout        = %q
  }
}
`, e.proxy.URL, string(e.proxy.CAPEM), e.cluster.Token, answerBudget.String())
}

func (e *answerEnv) mustApply() {
	e.t.Helper()
	if r := e.w.Apply(); r.Err != nil {
		e.t.Fatalf("%s apply: %v\n%s", acctest.Engine(), r.Err, r.Output)
	}
}

func greetingFor(step int) string { return fmt.Sprintf("g%d", step) }

// keptOnFailure is the common check of a failed run: state and cluster as
// they were.
func keptOnFailure(before, after snapshot) []string {
	var bad []string
	if strings.Join(before.state, ",") != strings.Join(after.state, ",") || before.stateUID != after.stateUID ||
		before.stateG != after.stateG {
		bad = append(bad, fmt.Sprintf("state changed by a failed run: before %v, after %v", before, after))
	}
	if before.exists != after.exists || before.uid != after.uid || before.version != after.version {
		bad = append(bad, fmt.Sprintf("the object changed in a failed run: before %v, after %v", before, after))
	}
	return bad
}

var answerOps = []answerOp{
	{
		name:     "refresh",
		resource: "k8sconnect_object.cm",
		request: func(e *answerEnv) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name}
		},
		setup: func(e *answerEnv) { e.objectConfig("hello", ""); e.mustApply() },
		reset: resetDestroyed,
		run: func(e *answerEnv, _ int) acctest.Result {
			return e.w.Run("apply", "-refresh-only", "-auto-approve", "-input=false", "-json")
		},
		check: func(e *answerEnv, ok bool, before, after snapshot, _ int) []string {
			// Whatever the answer, a refresh changes nothing in the cluster
			// and the object, still there, stays in state; but for the
			// server's own word that it is gone, which takes it out.
			if e.answer.gone && ok && len(after.state) == 0 {
				after.state, after.stateUID, after.stateG = before.state, before.stateUID, before.stateG
			}
			return keptOnFailure(before, after)
		},
	},
	{
		name:     "plan",
		resource: "k8sconnect_object.cm",
		request: func(e *answerEnv) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodPatch, Path: "/configmaps/" + e.name, Query: []string{"dryRun=All"}}
		},
		setup: func(e *answerEnv) { e.objectConfig("hello", ""); e.mustApply() },
		run: func(e *answerEnv, step int) acctest.Result {
			e.objectConfig(greetingFor(step), "")
			return e.w.Plan()
		},
		check: func(e *answerEnv, ok bool, before, after snapshot, _ int) []string {
			return keptOnFailure(before, after) // a plan changes nothing, failed or not
		},
	},
	{
		name:     "apply (update)",
		resource: "k8sconnect_object.cm",
		request:  func(e *answerEnv) faultproxy.Match { return faultproxy.ApplyOf("configmaps", e.name) },
		setup:    func(e *answerEnv) { e.objectConfig("hello", ""); e.mustApply() },
		run: func(e *answerEnv, step int) acctest.Result {
			e.objectConfig(greetingFor(step), "")
			return e.w.Apply()
		},
		check: func(e *answerEnv, ok bool, before, after snapshot, step int) []string {
			if !ok {
				return keptOnFailure(before, after)
			}
			var bad []string
			if after.uid != before.uid || after.stateUID != before.stateUID {
				bad = append(bad, fmt.Sprintf("the update replaced the object: before %v, after %v", before, after))
			}
			if after.greeting != greetingFor(step) || after.stateG != greetingFor(step) {
				bad = append(bad, fmt.Sprintf("the update did not land in cluster and state: %v", after))
			}
			return bad
		},
	},
	{
		name:     "destroy",
		resource: "k8sconnect_object.cm",
		request:  func(e *answerEnv) faultproxy.Match { return faultproxy.DeleteOf("configmaps", e.name) },
		setup:    func(e *answerEnv) { e.objectConfig("hello", ""); e.mustApply() },
		reset:    resetDestroyed,
		run:      func(e *answerEnv, _ int) acctest.Result { return e.w.Destroy() },
		check:    checkDestroyed,
	},
	{
		name:     "import",
		resource: "k8sconnect_object.cm",
		request: func(e *answerEnv) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name}
		},
		setup: func(e *answerEnv) {
			acctest.ApplyAs(e.t, "kubectl", configMaps, fmt.Sprintf(
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", e.name, e.ns))
			e.objectConfig("hello", "")
		},
		reset: func(e *answerEnv, _, after snapshot) {
			if len(after.state) != 0 {
				if r := e.w.Run("state", "rm", "k8sconnect_object.cm"); r.Err != nil {
					e.t.Fatalf("%s state rm: %v\n%s", acctest.Engine(), r.Err, r.Output)
				}
			}
		},
		run: func(e *answerEnv, _ int) acctest.Result {
			return e.w.Run("import", "-input=false", "-no-color", "k8sconnect_object.cm", fmt.Sprintf("v1/ConfigMap/%s/%s", e.ns, e.name))
		},
		check: func(e *answerEnv, ok bool, before, after snapshot, _ int) []string {
			if !ok {
				return keptOnFailure(before, after)
			}
			var bad []string
			if strings.Join(after.state, ",") != "k8sconnect_object.cm" || after.stateUID != before.uid {
				bad = append(bad, fmt.Sprintf("the import did not record the object: %v", after))
			}
			if after.version != before.version {
				bad = append(bad, fmt.Sprintf("the import changed the object: before %v, after %v", before, after))
			}
			return bad
		},
	},
	{
		// The object data source, read at plan: it writes nothing, and its
		// failure names the answer as the resources' do.
		name:     "data source",
		resource: "k8sconnect_object.cm",
		request: func(e *answerEnv) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name}
		},
		setup: func(e *answerEnv) {
			acctest.ApplyAs(e.t, "kubectl", configMaps, fmt.Sprintf(
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", e.name, e.ns))
			e.w.Write(e.providerBlock() + fmt.Sprintf(`
data "k8sconnect_object" "cm" {
  api_version = "v1"
  kind        = "ConfigMap"
  name        = %q
  namespace   = %q
}
output "greeting" { value = yamldecode(data.k8sconnect_object.cm.yaml_body).data.greeting }
`, e.name, e.ns))
		},
		run: func(e *answerEnv, _ int) acctest.Result { return e.w.Plan() },
		check: func(e *answerEnv, ok bool, before, after snapshot, _ int) []string {
			return keptOnFailure(before, after) // a read changes nothing, failed or not
		},
	},
	{
		name:     "patch (rival check)",
		resource: "k8sconnect_patch.greeting",
		request: func(e *answerEnv) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name}
		},
		setup: func(e *answerEnv) {
			e.setupPatchTarget()
			e.patchConfig("hello")
			e.mustApply()
		},
		run: func(e *answerEnv, step int) acctest.Result {
			e.patchConfig(greetingFor(step))
			return e.w.Apply()
		},
		reset: func(e *answerEnv, _, after snapshot) {
			if len(after.state) == 0 {
				// The patch let go of its target on the proxy's word that
				// it was gone, and its field manager is still on it: a new
				// target, as setup made it, for a new patch.
				e.forget(after)
				e.setupPatchTarget()
				e.mustApply()
			}
		},
		check: func(e *answerEnv, ok bool, before, after snapshot, step int) []string {
			if !ok {
				if e.answer.gone && len(after.state) == 0 {
					// The server's word that the target is gone takes the
					// patch out of state; the target is untouched.
					after.state, after.stateUID, after.stateG = before.state, before.stateUID, before.stateG
				}
				return keptOnFailure(before, after)
			}
			if after.greeting != greetingFor(step) || after.stateG != greetingFor(step) || after.uid != before.uid {
				return []string{fmt.Sprintf("the patch did not land in cluster and state: before %v, after %v", before, after)}
			}
			return nil
		},
	}, waitRow,
	createRow, planCreateRow,
	releaseRow("release plan"), releaseRow("release apply (update)"), releaseRow("release destroy"),
	setRow("set plan"), setRow("set apply (update)"), setRow("set destroy"),
}

// resetDestroyed applies again after a destroy that took the object or
// its state.
func resetDestroyed(e *answerEnv, _, after snapshot) {
	if len(after.state) == 0 || !after.exists {
		e.forget(after)
		e.mustApply()
	}
}

// forget deletes the object a run took out of state on the proxy's word
// that it was gone, while it is there: the next apply creates it anew.
func (e *answerEnv) forget(after snapshot) {
	e.t.Helper()
	if len(after.state) != 0 || !after.exists {
		return
	}
	err := acctest.Dynamic(e.t).Resource(configMaps).Namespace(e.ns).Delete(context.Background(), e.name, metav1.DeleteOptions{})
	if err != nil {
		e.t.Fatalf("deleting %s: %v", e.name, err)
	}
}

// checkDestroyed is a destroy's check: a failed one kept everything, one
// that succeeded left nothing, but for the server's word that the object
// was gone already (the proxy said so in its place; the object is there).
func checkDestroyed(e *answerEnv, ok bool, before, after snapshot, _ int) []string {
	if !ok {
		return keptOnFailure(before, after)
	}
	if len(after.state) != 0 || (after.exists && !e.answer.gone) {
		return []string{fmt.Sprintf("a destroy that succeeded left: %v", after)}
	}
	return nil
}

// waitConfig waits for the ConfigMap's greeting to be greeting; the test
// sets it while the wait watches.
func (e *answerEnv) waitConfig(greeting string) {
	e.w.Write(e.providerBlock() + fmt.Sprintf(`
resource "k8sconnect_wait" "greeting" {
  resource_ref = {
    api_version = "v1"
    kind        = "ConfigMap"
    namespace   = %q
    name        = %q
    cluster_connection = {
      host                   = %q
      cluster_ca_certificate = %q
      token                  = %q
      request_timeout        = %q
    }
  }
  wait_for = { field_value = { "data.greeting" = %q }, timeout = "10s" }
}
`, e.ns, e.name, e.proxy.URL, string(e.proxy.CAPEM), e.cluster.Token, answerBudget.String(), greeting))
}

// waitRow is the wait: the object changes while it watches.
var waitRow = answerOp{
	name:     "wait (watch)",
	resource: "k8sconnect_wait.greeting",
	request: func(e *answerEnv) faultproxy.Match {
		// Its list, its reads and its watches of the ConfigMap.
		return faultproxy.Match{Method: http.MethodGet, Path: "/namespaces/" + e.ns + "/configmaps"}
	},
	setup: func(e *answerEnv) {
		acctest.ApplyAs(e.t, "controller", configMaps, fmt.Sprintf(
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello}\n", e.name, e.ns))
		e.waitConfig("hello")
		e.mustApply()
	},
	run: func(e *answerEnv, step int) acctest.Result {
		e.waitConfig(greetingFor(step))
		mark := e.proxy.Count()
		finished, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			// The change comes once the wait watches (or has given up on
			// watching), so that every run meets the answer on its watch.
			giveUp := time.After(waitChangeAfter)
			for !e.watched(mark) {
				select {
				case <-finished:
					return
				case <-giveUp:
				case <-time.After(100 * time.Millisecond):
					continue
				}
				break
			}
			acctest.PatchAs(e.t, "controller", configMaps, e.ns, e.name,
				fmt.Sprintf(`{"data":{"greeting":%q}}`, greetingFor(step)))
		}()
		r := e.w.Apply()
		close(finished)
		<-done
		return r
	},
	check: func(e *answerEnv, ok bool, before, after snapshot, step int) []string {
		if !ok {
			// A wait has nothing in the cluster to keep: a failed one is
			// not in state (a changed wait_for replaces it) or is kept,
			// and the next apply waits again. The object it watched is
			// the same object.
			if after.uid != before.uid {
				return []string{fmt.Sprintf("the watched object was replaced: before %v, after %v", before, after)}
			}
			return nil
		}
		if strings.Join(after.state, ",") != "k8sconnect_wait.greeting" {
			return []string{fmt.Sprintf("the wait is not in state: %v", after)}
		}
		return nil
	},
}

// waitChangeAfter is when the test changes the object a wait watches if
// the wait has not watched by then: long enough for the engine to start the
// wait on a loaded machine (at 5 s, a cold CI run with three suites at once
// changed it before the wait first read it, which then found nothing to
// watch). A wait that never watches ends on its own 10 s timeout, which
// stops this clock too.
const waitChangeAfter = 30 * time.Second

// watched reports a watch request among the proxy's requests since mark
// (its count then).
func (e *answerEnv) watched(mark int) bool {
	requests := e.proxy.Requests()
	since := len(requests) - (e.proxy.Count() - mark)
	for _, q := range requests[max(0, since):] {
		if strings.Contains(q.Query, "watch=true") {
			return true
		}
	}
	return false
}

// setupPatchTarget makes the patch's target as Helm would.
func (e *answerEnv) setupPatchTarget() {
	acctest.ApplyAs(e.t, "helm", configMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {greeting: hello, owner: helm}\n", e.name, e.ns))
}

func (e *answerEnv) patchConfig(greeting string) {
	e.w.Write(e.providerBlock() + fmt.Sprintf(`
resource "k8sconnect_patch" "greeting" {
  target = {
    api_version = "v1"
    kind        = "ConfigMap"
    namespace   = %q
    name        = %q
  }
  patch          = "data: {greeting: %s}"
  take_ownership = true
}
`, e.ns, e.name, greeting))
}

// errorText is a failed run's errors: the diagnostics of a -json run, the
// output of one that prints text (import).
func errorText(r acctest.Result) string {
	var b strings.Builder
	for _, d := range r.Errors() {
		b.WriteString(d.Summary + "\n" + d.Detail + "\n")
	}
	if r.Err == nil {
		for _, d := range r.Warnings() {
			b.WriteString(d.Summary + "\n" + d.Detail + "\n")
		}
	}
	text := b.String()
	if text == "" {
		text = r.Output
	}
	// Text output wraps lines inside a box: join them again.
	return strings.Join(strings.Fields(strings.ReplaceAll(text, "│", " ")), " ")
}

// summary is the first error's summary, for the table.
var textSummary = regexp.MustCompile(`Error: ([^\n]+)`)

func summary(r acctest.Result) string {
	if errs := r.Errors(); len(errs) > 0 {
		return errs[0].Summary
	}
	if m := textSummary.FindStringSubmatch(r.Output); m != nil {
		return strings.TrimSpace(m[1])
	}
	return "(no error text)"
}

func TestAccAnswers(t *testing.T) {
	cluster := localcluster.Shared(t)
	var mu sync.Mutex
	cells := map[string]map[string]string{}
	t.Run("group", func(t *testing.T) {
		for _, op := range answerOps {
			t.Run(op.name, func(t *testing.T) {
				t.Parallel()
				e := &answerEnv{t: t, ns: acctest.Namespace(t), name: acctest.Name("answer"),
					proxy: faultproxy.New(t, cluster.Host, cluster.CAPEM), w: acctest.NewWorkdir(t), cluster: cluster}
				op.setup(e)
				e.w.Cleanup()
				t.Cleanup(e.proxy.Clear) // runs before the destroy registered above
				row := map[string]string{}
				for step, a := range apiAnswers {
					row[a.name] = e.observe(op, a, step)
				}
				mu.Lock()
				cells[op.name] = row
				mu.Unlock()
			})
		}
	})
	if t.Failed() || len(cells) != len(answerOps) {
		return // a partial run (-run selecting one row) checks no table
	}
	checkAnswersTable(t, answersTable(cells))
}

// observe runs one operation against one answer, asserts the invariants and
// returns the table's cell.
func (e *answerEnv) observe(op answerOp, a apiAnswer, step int) string {
	t := e.t
	t.Helper()
	before := e.snap(op.resource)
	var faults []*faultproxy.Fault
	for _, rule := range a.rules(op.request(e)) {
		faults = append(faults, e.proxy.Inject(rule))
	}
	e.answer = a
	mark := len(e.proxy.Requests())
	begin := time.Now()
	r := op.run(e, step)
	took := time.Since(begin)
	e.proxy.Clear()
	requests := e.proxy.Requests()
	if mark <= len(requests) {
		requests = requests[mark:]
	}
	hits := 0
	for _, f := range faults {
		hits += f.Hits()
	}
	after := e.snap(op.resource)
	ok := r.Err == nil
	t.Logf("%s %s against %q: ok=%v in %s, %d answered", acctest.Engine(), op.name, a.name, ok, took.Round(100*time.Millisecond), hits)

	var bad []string
	warned := ok && len(r.Warnings()) > 0
	if !ok || warned {
		text := errorText(r)
		if !strings.Contains(text, e.name) {
			bad = append(bad, "the error does not name the object "+e.name)
		}
		if a.remedy != "" && !strings.Contains(text, a.remedy) {
			bad = append(bad, fmt.Sprintf("the error carries no remedy (want %q)", a.remedy))
		}
	}
	bad = append(bad, op.check(e, ok, before, after, step)...)
	if a.waits {
		if !ok {
			bad = append(bad, "a run answered "+a.name+" twice did not succeed after waiting")
		}
		bad = append(bad, waitedRetryAfter(requests)...)
	}
	if a.resent && hits > 0 && !ok {
		bad = append(bad, "a run answered "+a.name+" did not send the request again and succeed")
	}
	if a.quick && hits > 0 && (took >= retryAfterPast*time.Second/2 || hits > 2) {
		// Neither waited for (60 s), nor sent again by a retry: at most
		// once by each of the two steps that read (a refresh, then a plan).
		bad = append(bad, fmt.Sprintf("a run answered %s took %s and met it %d time(s): it was waited for or sent again",
			a.name, took.Round(100*time.Millisecond), hits))
	}
	if len(bad) > 0 {
		for _, q := range requests {
			t.Logf("proxy: %s %s", q.Time.Format("15:04:05.000"), q)
		}
		t.Errorf("%s %s against %q:\n  %s\n%s", acctest.Engine(), op.name, a.name, strings.Join(bad, "\n  "), r.Output)
	}
	if op.reset != nil {
		op.reset(e, before, after)
	}

	switch {
	case hits == 0:
		return "not asked"
	case ok && a.waits:
		return fmt.Sprintf("succeeds, after waiting Retry-After %d time(s)", hits)
	case ok && a.resent:
		return "succeeds, the request sent again"
	case ok && warned:
		return "succeeds, warning: " + e.anonymous(r.Warnings()[0].Summary)
	case ok:
		return "succeeds"
	}
	return "fails: " + e.anonymous(summary(r))
}

// anonymous puts placeholders for the test's random names, so that the
// table is the same from run to run.
func (e *answerEnv) anonymous(s string) string {
	return strings.NewReplacer(e.ns, "<namespace>", e.name, "<name>").Replace(s)
}

// waitedRetryAfter checks that each answer asking for a retry was followed
// by the same request no sooner than Retry-After.
func waitedRetryAfter(requests []faultproxy.Request) []string {
	var bad []string
	for i, q := range requests {
		if q.Action != "answer" {
			continue
		}
		next := -1
		for j := i + 1; j < len(requests); j++ {
			if requests[j].Method == q.Method && requests[j].Path == q.Path && requests[j].Query == q.Query {
				next = j
				break
			}
		}
		if next < 0 {
			bad = append(bad, fmt.Sprintf("%s was never sent again", q))
			continue
		}
		// One tenth of a second of slack for the clocks of two processes.
		if gap := requests[next].Time.Sub(q.Time); gap < retryAfter*time.Second-100*time.Millisecond {
			bad = append(bad, fmt.Sprintf("%s was sent again after %s, before its Retry-After of %ds", q, gap, retryAfter))
		}
	}
	return bad
}

func answersTable(cells map[string]map[string]string) string {
	var b strings.Builder
	b.WriteString("| answer |")
	for _, op := range answerOps {
		b.WriteString(" " + op.name + " |")
	}
	b.WriteString("\n|---|")
	for range answerOps {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, a := range apiAnswers {
		b.WriteString("| " + a.name + " |")
		for _, op := range answerOps {
			b.WriteString(" " + strings.ReplaceAll(cells[op.name][a.name], "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func checkAnswersTable(t *testing.T, table string) {
	path := filepath.Join("..", "..", "docs", "reference.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i, j := strings.Index(text, answersBegin), strings.Index(text, answersEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no answers table between %q and %q", path, answersBegin, answersEnd)
	}
	committed := strings.TrimSpace(text[i+len(answersBegin) : j])
	if committed == strings.TrimSpace(table) {
		return
	}
	if os.Getenv("K8SCONNECT_UPDATE_DOCS") == "1" {
		text = text[:i+len(answersBegin)] + "\n" + table + text[j:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated the answers table in %s", path)
		return
	}
	t.Errorf("the answers table in %s is not what %s observed; rerun with K8SCONNECT_UPDATE_DOCS=1 "+
		"(go test -count=1 -run 'TestAccAnswers$' ./provider/object/) and review the change.\nobserved:\n%s",
		path, acctest.Engine(), table)
}
