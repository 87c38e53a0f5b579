package bridge_test

// The table of answers under Pulumi: TestAccAnswers' main rows
// (provider/object/answers_test.go) given by internal/testing/faultproxy in
// the API server's place to the one request each Pulumi operation depends
// on, through `pulumi preview`, `up`, `refresh` and `destroy` of one
// KubernetesObject. For each cell it checks what a user would: the exit
// code; a failure's output names the object and carries the remedy; the
// stack's state and the object in the cluster are kept by a failed run; a
// run that succeeds changed the object once. The outcomes make the second
// table in docs/reference.md; K8SCONNECT_UPDATE_DOCS=1 rewrites it.

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
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/faultproxy"
)

const (
	pulumiAnswersBegin = "<!-- pulumi answers table: written by TestPulumiAnswers (bridge/answers_test.go) -->"
	pulumiAnswersEnd   = "<!-- end of pulumi answers table -->"
	// pulumiBudget is the program's clusterConnection.requestTimeout.
	pulumiBudget = "5s"
)

var answerConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// pulumiAnswer is one row: what the proxy answers in the server's place.
type pulumiAnswer struct {
	name   string
	rule   func(m faultproxy.Match) faultproxy.Rule
	remedy string // a phrase a failure must carry
	// gone: the server's word that the object does not exist.
	gone bool
	// recovers: a run must succeed (the request sent again, or waited for).
	recovers bool
	// waits: the answer asks for a Retry-After that fits in the budget.
	waits bool
}

func pulumiAnswerWith(status int, header http.Header, times int) func(faultproxy.Match) faultproxy.Rule {
	return func(m faultproxy.Match) faultproxy.Rule {
		return faultproxy.Rule{Match: m, Action: faultproxy.Answer, Status: status, Header: header, Times: times}
	}
}

var pulumiAnswers = []pulumiAnswer{
	{name: "401", rule: pulumiAnswerWith(http.StatusUnauthorized, nil, 0), remedy: "expired"},
	{name: "403", rule: pulumiAnswerWith(http.StatusForbidden, nil, 0), remedy: "Check the RBAC rules"},
	{name: "404 on the object", rule: pulumiAnswerWith(http.StatusNotFound, nil, 0), gone: true},
	{name: "404 from a proxy (HTML)", rule: func(m faultproxy.Match) faultproxy.Rule {
		return faultproxy.Rule{Match: m, Action: faultproxy.Answer, Status: http.StatusNotFound,
			Header: http.Header{"Content-Type": {"text/html"}},
			Body:   []byte("<html><body><h1>404 Not Found</h1>nginx</body></html>")}
	}},
	{name: "429 Retry-After", rule: pulumiAnswerWith(http.StatusTooManyRequests, http.Header{"Retry-After": {"1"}}, 2), recovers: true, waits: true},
	{name: "429 Retry-After past the budget", rule: pulumiAnswerWith(http.StatusTooManyRequests,
		http.Header{"Retry-After": {"60"}}, 0), remedy: "asked to be sent the request again later than this request could wait"},
	{name: "503, no Retry-After", rule: pulumiAnswerWith(http.StatusServiceUnavailable, nil, 2), recovers: true},
	{name: "connection reset", rule: func(m faultproxy.Match) faultproxy.Rule {
		return faultproxy.Rule{Match: m, Action: faultproxy.Reset}
	}, remedy: "The network failed"},
	{name: "connection stalled", rule: func(m faultproxy.Match) faultproxy.Rule {
		return faultproxy.Rule{Match: m, Action: faultproxy.Stall, MaxHold: 2 * time.Minute}
	}, remedy: "The network failed"},
}

// pulumiSnap is what a user compares before and after a run.
type pulumiSnap struct {
	inState  int
	exists   bool
	uid      string
	greeting string
	version  string
}

func (e *pulumiCrash) snapAnswer() pulumiSnap {
	e.t.Helper()
	s := pulumiSnap{inState: len(e.objectsInState())}
	obj, err := acctest.Get(e.t, answerConfigMaps, e.ns, e.name)
	if err != nil {
		e.t.Fatal(err)
	}
	if obj != nil {
		s.exists, s.uid, s.version = true, string(obj.GetUID()), obj.GetResourceVersion()
		data, _ := obj.Object["data"].(map[string]any)
		s.greeting, _ = data["greeting"].(string)
	}
	return s
}

// writeAnswer is the program: the ConfigMap with greeting, through the proxy
// with a short budget.
func (e *pulumiCrash) writeAnswer(greeting string) {
	e.t.Helper()
	conn := yamlConnection(e.proxy.URL, e.proxy.CAPEM, e.cluster.Token)
	conn["requestTimeout"] = pulumiBudget
	e.writeProgram(map[string]any{"cm": map[string]any{
		"type": "k8sconnect:KubernetesObject",
		"properties": map[string]any{
			"clusterConnection": conn,
			"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  greeting: %s\n",
				e.name, e.ns, greeting),
		},
	}})
}

// pulumiOp is one column.
type pulumiOp struct {
	name    string
	request func(e *pulumiCrash) faultproxy.Match
	created bool // the object exists and is in state before each run
	run     func(e *pulumiCrash, greeting string) pulumiResult
	// updates: a run that succeeds leaves the greeting in the cluster.
	updates bool
	destroy bool
	refresh bool
}

var pulumiOps = []pulumiOp{
	{name: "preview (update)", created: true,
		request: func(e *pulumiCrash) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodPatch, Path: "/configmaps/" + e.name, Query: []string{"dryRun=All"}}
		},
		run: func(e *pulumiCrash, g string) pulumiResult {
			e.writeAnswer(g)
			return e.timed("preview", "preview")
		}},
	{name: "up (create)", updates: true,
		request: func(e *pulumiCrash) faultproxy.Match { return faultproxy.ApplyOf("configmaps", e.name) },
		run: func(e *pulumiCrash, g string) pulumiResult {
			e.writeAnswer(g)
			return e.up("create")
		}},
	{name: "up (update)", created: true, updates: true,
		request: func(e *pulumiCrash) faultproxy.Match { return faultproxy.ApplyOf("configmaps", e.name) },
		run: func(e *pulumiCrash, g string) pulumiResult {
			e.writeAnswer(g)
			return e.up("update")
		}},
	{name: "refresh", created: true, refresh: true,
		request: func(e *pulumiCrash) faultproxy.Match {
			return faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name}
		},
		run: func(e *pulumiCrash, _ string) pulumiResult {
			return e.timed("refresh", "refresh", "--yes", "--skip-preview")
		}},
	{name: "destroy", created: true, destroy: true,
		request: func(e *pulumiCrash) faultproxy.Match { return faultproxy.DeleteOf("configmaps", e.name) },
		run:     func(e *pulumiCrash, _ string) pulumiResult { return e.destroy("answer") }},
}

func TestPulumiAnswers(t *testing.T) {
	skipShort(t)
	var mu sync.Mutex
	cells := map[string]map[string]string{}
	t.Run("group", func(t *testing.T) {
		for _, op := range pulumiOps {
			t.Run(op.name, func(t *testing.T) {
				e := newPulumiCrash(t) // parallel
				row := map[string]string{}
				for i, a := range pulumiAnswers {
					row[a.name] = e.observeAnswer(op, a, fmt.Sprintf("g%d", i))
				}
				mu.Lock()
				cells[op.name] = row
				mu.Unlock()
			})
		}
	})
	if t.Failed() || len(cells) != len(pulumiOps) {
		return
	}
	checkPulumiAnswersTable(t, pulumiAnswersTable(cells))
}

// bring puts the column's starting point back: the object in state and in
// the cluster (created), or neither.
func (e *pulumiCrash) bring(op pulumiOp) {
	e.t.Helper()
	s := e.snapAnswer()
	if s.inState == 0 && s.exists {
		// Taken out of state on the proxy's word that it was gone, or left
		// by a failed create: it goes, and the next up makes it anew.
		err := acctest.Dynamic(e.t).Resource(answerConfigMaps).Namespace(e.ns).Delete(context.Background(), e.name, metav1.DeleteOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
	}
	switch {
	case op.created && (s.inState == 0 || !s.exists):
		e.writeAnswer("hello")
		e.mustSucceed(e.up("setup"), "up (setup)")
	case !op.created && s.inState > 0:
		e.mustSucceed(e.destroy("setup"), "destroy (setup)")
	}
}

var pulumiError = regexp.MustCompile(`(?m)^\s*error: (.+)$`)

// pulumiSummaries are the provider's diagnostic summaries of these
// operations. The bridge prints a diagnostic as its detail followed by its
// summary, so the summary is found by name, the earliest in the output.
var pulumiSummaries = []string{
	"The server-side dry run failed", "The API server rejected the object", "Apply failed", "Delete failed",
	"Read failed", "Stored credentials refused", "Could not refresh", "Unknown kind", "API discovery failed",
	"Cannot confirm which cluster this is", "Could not read the object at plan time", noAnswerSummary,
}

// noAnswerSummary is connection.NoAnswer, in the test's own words.
const noAnswerSummary = "No answer from the API server (network failure)"

// pulumiSummary is the first error the provider reported: its summary.
func (e *pulumiCrash) pulumiSummary(out string) string {
	out = errorBlocks(out)
	first, at := "", len(out)
	for _, s := range pulumiSummaries {
		if i := strings.Index(out, s); i >= 0 && i < at {
			first, at = s, i
		}
	}
	if first == "" {
		for _, m := range pulumiError.FindAllStringSubmatch(out, -1) {
			line := strings.TrimSpace(m[1])
			if !strings.Contains(line, " failed") || strings.Contains(line, "[ERROR]") {
				first = strings.TrimPrefix(line, "[ERROR] ")
				if summary, _, ok := strings.Cut(first, ": "); ok {
					first = summary
				}
				break
			}
		}
	}
	if first == "" {
		first = "(no error text)"
	}
	return strings.NewReplacer(e.ns, "<namespace>", e.name, "<name>").Replace(first)
}

// errorBlocks is the text of the error diagnostics in a Pulumi run's output,
// without its warnings and the engine's own "update failed".
func errorBlocks(out string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(out, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "error: "):
			rest := strings.TrimPrefix(trimmed, "error: ")
			in = !strings.HasSuffix(rest, " failed") || strings.Contains(rest, ":")
		case strings.HasPrefix(trimmed, "warning: "), strings.HasPrefix(trimmed, "Resources:"):
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (e *pulumiCrash) observeAnswer(op pulumiOp, a pulumiAnswer, greeting string) string {
	t := e.t
	e.bring(op)
	before := e.snapAnswer()
	f := e.proxy.Inject(a.rule(op.request(e)))
	r := op.run(e, greeting)
	e.proxy.Clear()
	after := e.snapAnswer()
	ok, hits := r.err == nil, f.Hits()
	t.Logf("pulumi %s against %q: ok=%v, %d answered", op.name, a.name, ok, hits)
	if !ok {
		if i := strings.Index(r.out, "Diagnostics:"); i >= 0 {
			t.Logf("%s", r.out[i:min(len(r.out), i+1500)])
		}
	}

	var bad []string
	if !ok {
		text := strings.Join(strings.Fields(r.out), " ")
		if !strings.Contains(text, e.name) {
			bad = append(bad, "the error does not name the object "+e.name)
		}
		if a.remedy != "" && !strings.Contains(text, a.remedy) {
			bad = append(bad, fmt.Sprintf("the error carries no remedy (want %q)", a.remedy))
		}
		if a.recovers && hits > 0 {
			bad = append(bad, "a run answered "+a.name+" did not recover")
		}
	}
	kept := before.inState == after.inState && before.exists == after.exists && before.uid == after.uid && before.version == after.version
	switch {
	case ok && op.destroy:
		if after.inState != 0 || (after.exists && !a.gone) {
			bad = append(bad, fmt.Sprintf("a destroy that succeeded left: %+v", after))
		}
	case ok && op.updates:
		if after.inState != 1 || !after.exists || after.greeting != greeting {
			bad = append(bad, fmt.Sprintf("the up did not land in cluster and state: %+v", after))
		}
	case ok && op.refresh && a.gone:
		if after.inState != 0 || after.uid != before.uid || after.version != before.version {
			bad = append(bad, fmt.Sprintf("the server's NotFound did not take the object out of state alone: %+v -> %+v", before, after))
		}
	case !kept:
		bad = append(bad, fmt.Sprintf("state or the object changed: %+v -> %+v", before, after))
	}
	if len(bad) > 0 {
		t.Errorf("pulumi %s against %q:\n  %s\n%s", op.name, a.name, strings.Join(bad, "\n  "), r.out)
	}
	switch {
	case hits == 0:
		return "not asked"
	case ok && a.waits:
		return fmt.Sprintf("succeeds, after waiting Retry-After %d time(s)", hits)
	case ok && a.recovers:
		return "succeeds, the request sent again"
	case ok:
		return "succeeds"
	}
	return "fails: " + e.pulumiSummary(r.out)
}

func pulumiAnswersTable(cells map[string]map[string]string) string {
	var b strings.Builder
	b.WriteString("| answer |")
	for _, op := range pulumiOps {
		b.WriteString(" " + op.name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(pulumiOps)) + "\n")
	for _, a := range pulumiAnswers {
		b.WriteString("| " + a.name + " |")
		for _, op := range pulumiOps {
			b.WriteString(" " + strings.ReplaceAll(cells[op.name][a.name], "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func checkPulumiAnswersTable(t *testing.T, table string) {
	path := filepath.Join("..", "docs", "reference.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i, j := strings.Index(text, pulumiAnswersBegin), strings.Index(text, pulumiAnswersEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no Pulumi answers table between %q and %q", path, pulumiAnswersBegin, pulumiAnswersEnd)
	}
	if strings.TrimSpace(text[i+len(pulumiAnswersBegin):j]) == strings.TrimSpace(table) {
		return
	}
	if os.Getenv("K8SCONNECT_UPDATE_DOCS") == "1" {
		text = text[:i+len(pulumiAnswersBegin)] + "\n" + table + text[j:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated the Pulumi answers table in %s", path)
		return
	}
	t.Errorf("the Pulumi answers table in %s is not what pulumi observed; rerun with K8SCONNECT_UPDATE_DOCS=1 "+
		"(cd bridge && go test -count=1 -run 'TestPulumiAnswers$' .) and review the change.\nobserved:\n%s", path, table)
}

// A `pulumi refresh` that cannot read the object fails, where Terraform's
// -refresh-only keeps state with a warning: since Pulumi 3.1xx the engine
// shows a refresh's changes by asking the provider to plan the stored
// inputs against what it read, and no plan of an object that cannot be read
// is made. The stack is left as it was. With the engine's legacy refresh
// diff (PULUMI_ENABLE_LEGACY_REFRESH_DIFF=true, as docs/reference.md says),
// the refresh asks only the provider's read, and keeps state with the same
// warning as Terraform.
func TestPulumiRefresh_unreadableObjectKeepsTheStack(t *testing.T) {
	e := newPulumiCrash(t)
	e.writeAnswer("one")
	e.mustSucceed(e.up("create"), "up")
	before := e.snapAnswer()

	f := e.proxy.Inject(faultproxy.Rule{Match: faultproxy.Match{Method: http.MethodGet, Path: "/configmaps/" + e.name},
		Action: faultproxy.Reset})
	r := e.timed("refresh (the object's reads reset)", "refresh", "--yes", "--skip-preview")
	acctest.ExpectActed(t, f)
	e.mustFail(r, "refresh")
	if text := strings.Join(strings.Fields(r.out), " "); !strings.Contains(text, e.name) || !strings.Contains(text, "The network failed") {
		t.Errorf("the refresh's error does not name the object and the network failure:\n%s", r.out)
	}
	if after := e.snapAnswer(); after != before {
		t.Errorf("a failed refresh changed the stack or the object: %+v -> %+v", before, after)
	}

	e.env = append(e.env, "PULUMI_ENABLE_LEGACY_REFRESH_DIFF=true")
	r = e.timed("refresh, legacy diff (the object's reads reset)", "refresh", "--yes", "--skip-preview")
	e.mustSucceed(r, "refresh with the legacy refresh diff")
	if text := strings.Join(strings.Fields(r.out), " "); !strings.Contains(text, "Could not refresh") || !strings.Contains(text, "state kept") {
		t.Errorf("the refresh did not warn that state was kept:\n%s", r.out)
	}
	if after := e.snapAnswer(); after != before {
		t.Errorf("a refresh that could not read changed the stack or the object: %+v -> %+v", before, after)
	}
	e.proxy.Clear()
}
