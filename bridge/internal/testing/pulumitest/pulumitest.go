// Package pulumitest runs the Pulumi examples (examples/pulumi-*) against the
// bridged provider, one operation at a time, so that a Go test can look at the
// cluster between operations.
//
// Every Stack gets its own file:// backend and PULUMI_HOME in temporary
// directories, never asks for a plugin from the network, and finds
// pulumi-resource-k8sconnect (built once per test binary from this checkout)
// and the pulumi CLI (package toolchain) on PATH. How an example runs depends
// on its language:
//
//   - YAML and Java: the pulumi CLI (`pulumi up`, ...) on the example, through
//     the language host beside the CLI. The project directory is a temporary
//     one that links to the example's files, so the stack config file (and
//     Java's target/) land there and not in the repository. Preparing Java
//     installs sdk/java into the Maven repository the Java tests share (see
//     prepareJava); a Java scenario is a main class, chosen with
//     -DmainClass in the project's .mvn/maven.config.
//   - Go, TypeScript, Python: the Go, Node and Python language hosts cannot be
//     built here, so a driver in tools/pulumi-automation runs the example
//     unchanged as an Automation API inline program. Preparing a language the
//     first time builds what it needs: the Go driver; the Node SDK (tsc) and
//     the example's node_modules; a virtualenv at examples/pulumi-python/.venv.
//     Preparation is skipped while its inputs are unchanged (stamps in
//     .work/pulumi) and serialized across test processes with file locks.
//
// Environ gives tests that run pulumi on programs of their own the same
// environment. The tests need go, node/npm, python3, java and mvn on PATH, and
// npm, PyPI and Maven Central reachable the first time.
package pulumitest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/toolchain"
)

// Language is an example's language.
type Language string

const (
	YAML       Language = "yaml"
	Go         Language = "go"
	TypeScript Language = "typescript"
	Python     Language = "python"
	Java       Language = "java"
)

// Languages lists every example language.
var Languages = []Language{YAML, Go, TypeScript, Python, Java}

// Operation is one pulumi operation.
type Operation string

const (
	Up      Operation = "up"
	Preview Operation = "preview"
	Refresh Operation = "refresh"
	Destroy Operation = "destroy"
)

// OperationTimeout bounds a single operation.
var OperationTimeout = 10 * time.Minute

// Value is one stack config value.
type Value struct {
	Value  string `json:"value"`
	Secret bool   `json:"secret,omitempty"`
}

// Config is stack config, keyed by name in the project's namespace (e.g.
// "message" for k8sconnect-go:message).
type Config map[string]Value

// Plain and Secret make config values.
func Plain(v string) Value  { return Value{Value: v} }
func Secret(v string) Value { return Value{Value: v, Secret: true} }

// Result is what one operation did.
type Result struct {
	Operation Operation
	// Changes counts resources by operation ("create", "update", "same",
	// "delete", "replace"...), the stack's own pulumi:pulumi:Stack included.
	Changes map[string]int
	// Outputs are the stack outputs after Up, as plain values.
	Outputs map[string]any
	// Log is the engine's output.
	Log string
}

// Stack is one stack of one example, with its own backend and PULUMI_HOME.
type Stack struct {
	t        testing.TB
	lang     Language
	name     string
	example  string   // the example directory
	scenario string   // the scenario program, or "" for the example's main program
	dir      string   // scratch directory of this stack; the project directory under the CLI
	env      []string // environment of every pulumi and driver process
	driver   []string // command that runs one operation (Go, TypeScript, Python); nil under the CLI
	deployed bool     // an Up may have left resources; Cleanup destroys them
}

// New prepares lang (once per test binary) and returns a new, empty stack of
// its example's main program. If the test ends with resources still deployed,
// a destroy runs in Cleanup.
func New(t testing.TB, lang Language) *Stack {
	t.Helper()
	return NewScenario(t, lang, "")
}

// NewScenario is New for one of the example's scenario programs, which live
// beside the main program: examples/pulumi-go/scenarios (registered by name in
// scenarios.Programs), examples/pulumi-typescript/scenarios/<name>.ts,
// examples/pulumi-python/scenarios/<name>.py and the Java main class
// com.k8sconnect.examples.scenarios.<name>. They share the main program's
// project name, so the same config keys reach them. A YAML program of a test's
// own is written by the test: see NewYAMLProgram.
func NewScenario(t testing.TB, lang Language, scenario string) *Stack {
	t.Helper()
	if lang == YAML && scenario != "" {
		t.Fatalf("pulumitest: YAML scenarios are written by the test; use NewYAMLProgram")
	}
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{
		t:        t,
		lang:     lang,
		name:     "test" + randomSuffix(),
		example:  filepath.Join(repo, "examples", "pulumi-"+string(lang)),
		scenario: scenario,
		dir:      t.TempDir(),
	}
	s.env = Environ(t, s.dir)

	switch lang {
	case YAML:
		s.linkProject(t)
	case Java:
		s.env = append(s.env, prepareJava(t, repo)...)
		s.linkProject(t)
		if scenario != "" {
			s.selectJavaMainClass(t, scenario)
		}
	case Go:
		s.driver = []string{prepareGo(t, repo)}
	case TypeScript:
		s.driver = []string{"node", filepath.Join(repo, "tools", "pulumi-automation", "nodejs", "run.js")}
		prepareTypeScript(t, repo)
	case Python:
		s.driver = []string{preparePython(t, repo), filepath.Join(repo, "tools", "pulumi-automation", "python", "run.py")}
	default:
		t.Fatalf("pulumitest: unknown language %q", lang)
	}

	s.destroyOnCleanup()
	return s
}

func (s *Stack) destroyOnCleanup() {
	s.t.Cleanup(func() {
		if !s.deployed {
			return
		}
		if _, err := s.run(Destroy, nil, nil); err != nil {
			s.t.Logf("pulumitest: cleanup destroy of %s failed: %v", s.program(), err)
		}
	})
}

// NewYAMLProgram is New for a YAML program the test writes itself: source is
// the whole Pulumi.yaml.
func NewYAMLProgram(t testing.TB, source string) *Stack {
	t.Helper()
	s := &Stack{t: t, lang: YAML, name: "test" + randomSuffix(), scenario: "(the test's own program)", dir: t.TempDir()}
	s.env = Environ(t, s.dir)
	s.WriteYAML(source)
	if out, err := execIn(s.dir, s.env, "pulumi", "stack", "init", s.name, "--non-interactive"); err != nil {
		t.Fatalf("pulumi stack init: %v\n%s", err, out)
	}
	s.destroyOnCleanup()
	return s
}

// WriteYAML replaces the program of a stack made by NewYAMLProgram.
func (s *Stack) WriteYAML(source string) {
	s.t.Helper()
	if s.lang != YAML || s.example != "" {
		s.t.Fatalf("pulumitest: WriteYAML is for stacks made by NewYAMLProgram")
	}
	if err := os.WriteFile(filepath.Join(s.dir, "Pulumi.yaml"), []byte(source), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// Resources are the types and names of the resources in the stack's state
// (`pulumi stack export`), the stack itself and providers left out, and the
// number of operations the engine left pending.
func (s *Stack) Resources() (resources []string, pending int) {
	s.t.Helper()
	dir := s.dir
	if !s.viaCLI() {
		dir = filepath.Join(s.dir, "workspace") // where the driver's workspace keeps Pulumi.yaml
	}
	out, err := execIn(dir, s.env, "pulumi", "stack", "export", "--stack", s.name)
	if err != nil {
		s.t.Fatalf("pulumi stack export: %v\n%s", err, out)
	}
	var export struct {
		Deployment struct {
			Resources []struct {
				URN  string `json:"urn"`
				Type string `json:"type"`
			} `json:"resources"`
			Pending []json.RawMessage `json:"pending_operations"`
		} `json:"deployment"`
	}
	start := strings.Index(out, "{")
	if start < 0 {
		s.t.Fatalf("pulumi stack export printed no deployment:\n%s", out)
	}
	if err := json.Unmarshal([]byte(out[start:]), &export); err != nil {
		s.t.Fatalf("pulumi stack export: %v\n%s", err, out)
	}
	for _, r := range export.Deployment.Resources {
		if r.Type == "pulumi:pulumi:Stack" || strings.HasPrefix(r.Type, "pulumi:providers:") {
			continue
		}
		resources = append(resources, r.Type+" "+r.URN[strings.LastIndex(r.URN, "::")+2:])
	}
	return resources, len(export.Deployment.Pending)
}

// SetEnv sets an environment variable for the stack's pulumi and driver
// processes, and so for the provider plugin (import reads $KUBECONFIG).
func (s *Stack) SetEnv(key, value string) { s.env = append(s.env, key+"="+value) }

// Name is the stack's name.
func (s *Stack) Name() string { return s.name }

// Flag changes how an operation runs.
type Flag string

// RefreshFirst makes a preview or an up refresh the stack's resources from
// the cluster first (`--refresh`), so a change made by someone else is seen.
const RefreshFirst Flag = "--refresh"

// ExpectNoChanges makes a preview fail if it plans any change: pulumi's own
// `--expect-no-changes` under the CLI. The Automation API drivers take no
// flags of this kind, so for them Run checks the preview's changes instead.
// Either way the error says "no changes were expected".
const ExpectNoChanges Flag = "--expect-no-changes"

// Run sets cfg (on top of what earlier runs set) and runs op, failing the test
// if the operation fails.
func (s *Stack) Run(op Operation, cfg Config, flags ...Flag) Result {
	s.t.Helper()
	res, err := s.Try(op, cfg, flags...)
	if err != nil {
		s.t.Fatalf("pulumi %s of %s failed: %v", op, s.program(), err)
	}
	return res
}

// Try is Run for an operation that may fail: the error (with the engine's
// output) is returned, and Result.Log holds the output either way.
func (s *Stack) Try(op Operation, cfg Config, flags ...Flag) (Result, error) {
	s.t.Helper()
	begin := time.Now()
	res, err := s.run(op, cfg, flags)
	outcome := fmt.Sprint(res.Changes)
	if err != nil {
		outcome = "failed"
	}
	s.t.Logf("pulumi %s %v (%s): %s in %s", op, flags, s.program(), outcome, time.Since(begin).Round(100*time.Millisecond))
	return res, err
}

// program names the program for messages: "the go example" or "the go
// scenario patch-json".
func (s *Stack) program() string {
	if s.scenario == "" {
		return "the " + string(s.lang) + " example"
	}
	return "the " + string(s.lang) + " scenario " + s.scenario
}

func (s *Stack) run(op Operation, cfg Config, flags []Flag) (Result, error) {
	switch op {
	case Up:
		s.deployed = true
	case Preview, Refresh, Destroy:
	default:
		return Result{}, fmt.Errorf("unknown operation %q", op)
	}
	var res Result
	var err error
	expectNoChanges := false
	var driverFlags []Flag
	for _, f := range flags {
		if f == RefreshFirst && op != Up && op != Preview {
			return Result{}, fmt.Errorf("%s applies to up and preview, not %s", f, op)
		}
		if f == ExpectNoChanges {
			if op != Preview {
				return Result{}, fmt.Errorf("%s applies to preview, not %s", f, op)
			}
			expectNoChanges = true
			continue
		}
		driverFlags = append(driverFlags, f)
	}
	if s.viaCLI() {
		res, err = s.runCLI(op, cfg, flags)
	} else {
		res, err = s.runDriver(op, cfg, driverFlags)
		if err == nil && expectNoChanges {
			for change, n := range res.Changes {
				if change != "same" && n > 0 {
					// In the CLI's words, so that a test can look for one message.
					err = fmt.Errorf("no changes were expected but changes were proposed (%v)\n%s", res.Changes, res.Log)
				}
			}
		}
	}
	if err == nil && op == Destroy {
		s.deployed = false
	}
	return res, err
}

// runDriver runs one operation through the language's Automation API driver.
func (s *Stack) runDriver(op Operation, cfg Config, flags []Flag) (Result, error) {
	if cfg == nil {
		cfg = Config{}
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return Result{}, err
	}
	workspace := filepath.Join(s.dir, "workspace")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return Result{}, err
	}
	env := append(append([]string(nil), s.env...),
		"K8SCONNECT_PULUMI_EXAMPLE="+s.example,
		"K8SCONNECT_PULUMI_WORKDIR="+workspace,
		"K8SCONNECT_PULUMI_STACK="+s.name,
		"K8SCONNECT_PULUMI_CONFIG="+string(cfgJSON),
		"K8SCONNECT_PULUMI_PROGRAM="+s.scenario,
	)
	args := append(append([]string(nil), s.driver[1:]...), string(op))
	for _, f := range flags {
		args = append(args, string(f))
	}
	out, err := execIn(s.dir, env, s.driver[0], args...)
	if err != nil {
		return Result{Operation: op, Log: out}, fmt.Errorf("%w\n%s", err, out)
	}
	const prefix = "k8sconnect-result: "
	var last string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			last = strings.TrimPrefix(sc.Text(), prefix)
		}
	}
	var r struct {
		Changes map[string]int `json:"changes"`
		Outputs map[string]any `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return Result{Operation: op, Log: out}, fmt.Errorf("driver printed no result line (%v)\n%s", err, out)
	}
	return Result{Operation: op, Changes: nonNil(r.Changes), Outputs: r.Outputs, Log: out}, nil
}

// viaCLI reports whether the stack's operations run through the pulumi CLI
// and a language host (YAML, Java) rather than an Automation API driver.
func (s *Stack) viaCLI() bool { return s.driver == nil }

// linkProject makes the stack's project directory: links to every file of the
// example, so the CLI runs the example itself while Pulumi.<stack>.yaml (and
// a Java build's target/) are written here.
func (s *Stack) linkProject(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(s.example)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "Pulumi.") && e.Name() != "Pulumi.yaml" {
			continue // a developer's own stack config
		}
		if e.Name() == "target" || e.Name() == ".mvn" {
			continue // a developer's own Maven build and settings
		}
		if err := os.Symlink(filepath.Join(s.example, e.Name()), filepath.Join(s.dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := execIn(s.dir, s.env, "pulumi", "stack", "init", s.name, "--non-interactive"); err != nil {
		t.Fatalf("pulumi stack init: %v\n%s", err, out)
	}
}

// selectJavaMainClass makes a Java stack run the scenario's main class
// instead of the quickstart: the example's pom.xml starts ${mainClass}, and
// Maven reads the project's .mvn/maven.config before the command line (where
// the language host names its own main class to list the plugins).
func (s *Stack) selectJavaMainClass(t testing.TB, scenario string) {
	t.Helper()
	const pkg = "com.k8sconnect.examples.scenarios"
	source := filepath.Join(s.example, "src", "main", "java", filepath.FromSlash(strings.ReplaceAll(pkg, ".", "/")), scenario+".java")
	if _, err := os.Stat(source); err != nil {
		t.Fatalf("pulumitest: no Java scenario %q: %v", scenario, err)
	}
	mvn := filepath.Join(s.dir, ".mvn")
	if err := os.Mkdir(mvn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mvn, "maven.config"), []byte("-DmainClass="+pkg+"."+scenario+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCLI runs one operation of a YAML or Java stack with the pulumi CLI.
func (s *Stack) runCLI(op Operation, cfg Config, flags []Flag) (Result, error) {
	if len(cfg) > 0 {
		args := []string{"config", "set-all", "--stack", s.name}
		for _, k := range sortedKeys(cfg) {
			flag := "--plaintext"
			if cfg[k].Secret {
				flag = "--secret"
			}
			args = append(args, flag, k+"="+cfg[k].Value)
		}
		if out, err := execIn(s.dir, s.env, "pulumi", args...); err != nil {
			return Result{Operation: op}, fmt.Errorf("pulumi config set-all: %w\n%s", err, out)
		}
	}

	events := filepath.Join(s.dir, "events-"+randomSuffix()+".json")
	args := []string{string(op), "--stack", s.name, "--non-interactive", "--event-log", events}
	if op != Preview {
		args = append(args, "--yes", "--skip-preview")
	}
	for _, f := range flags {
		args = append(args, string(f))
	}
	out, err := execIn(s.dir, s.env, "pulumi", args...)
	res := Result{Operation: op, Log: out}
	if err != nil {
		return res, fmt.Errorf("%w\n%s", err, out)
	}
	if res.Changes, err = summaryChanges(events); err != nil {
		return res, fmt.Errorf("%w\n%s", err, out)
	}
	if op == Up {
		o, err := execIn(s.dir, s.env, "pulumi", "stack", "output", "--stack", s.name, "--json", "--show-secrets")
		if err != nil {
			return res, fmt.Errorf("pulumi stack output: %w\n%s", err, o)
		}
		if err := json.Unmarshal([]byte(o), &res.Outputs); err != nil {
			return res, fmt.Errorf("pulumi stack output: %w\n%s", err, o)
		}
	}
	return res, nil
}

// summaryChanges reads the resource changes of the summary event of an event
// log (PULUMI_DEBUG_COMMANDS=true enables --event-log).
func summaryChanges(path string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev struct {
			SummaryEvent *struct {
				ResourceChanges map[string]int `json:"resourceChanges"`
			} `json:"summaryEvent"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.SummaryEvent != nil {
			return nonNil(ev.SummaryEvent.ResourceChanges), nil
		}
	}
	return nil, fmt.Errorf("no summary event in %s", path)
}

// Environ builds what every stack needs, once per test binary (the plugin from
// this checkout, the pulumi CLI and its YAML language host), and returns the
// environment that Stack runs pulumi with, for tests that run pulumi on
// programs of their own: the inherited environment minus any Pulumi settings
// of the developer and KUBECONFIG, with a private file:// backend and
// PULUMI_HOME under dir, the plugin and then the CLI first on PATH, a config
// passphrase, no update checks or plugin downloads, and PULUMI_DEBUG_COMMANDS
// (for --event-log).
func Environ(t testing.TB, dir string) []string {
	t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pluginDir, pulumiDir := prepareCommon(t, repo)
	return baseEnv(dir, pluginDir, pulumiDir)
}

func baseEnv(dir, pluginDir, pulumiDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PULUMI_") || strings.HasPrefix(k, "K8SCONNECT_PULUMI_") || k == "PATH" || k == "KUBECONFIG" {
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(dir, "home")
	backend := filepath.Join(dir, "backend")
	for _, d := range []string{home, backend} {
		_ = os.MkdirAll(d, 0o755)
	}
	return append(env,
		// Our plugin first: the engine uses a plugin found on PATH whatever
		// version the program asks for.
		"PATH="+pluginDir+string(os.PathListSeparator)+pulumiDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PULUMI_HOME="+home,
		"PULUMI_BACKEND_URL=file://"+filepath.ToSlash(backend),
		"PULUMI_CONFIG_PASSPHRASE=k8sconnect-test",
		"PULUMI_SKIP_UPDATE_CHECK=true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
		// --event-log, for the YAML runs' change summary.
		"PULUMI_DEBUG_COMMANDS=true",
	)
}

func execIn(dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), OperationTimeout)
	defer cancel()
	path := name
	if !strings.Contains(name, string(os.PathSeparator)) {
		// Resolve against the environment's PATH, not this process's.
		p, err := lookPath(name, env)
		if err != nil {
			return "", err
		}
		path = p
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: timed out after %s", name, strings.Join(args, " "), OperationTimeout)
	}
	return string(out), err
}

func lookPath(name string, env []string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, d := range filepath.SplitList(v) {
				p := filepath.Join(d, name)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					return p, nil
				}
			}
			break
		}
	}
	return "", fmt.Errorf("%s not found on the test PATH", name)
}

func nonNil(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

func sortedKeys(c Config) []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// once runs each preparation a single time per test binary and remembers its
// failure for later callers.
type once struct {
	sync.Once
	val string
	err error
}

func (o *once) do(t testing.TB, f func() (string, error)) string {
	t.Helper()
	o.Do(func() { o.val, o.err = f() })
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.val
}

// CLI runs the pulumi CLI in the project directory of a stack that runs
// through the CLI (YAML, Java) with args and --stack, failing the test on an
// error, and returns what it printed (for `stack export`, `stack output
// --json`, `config set`, ...).
func (s *Stack) CLI(args ...string) string {
	s.t.Helper()
	if !s.viaCLI() {
		s.t.Fatalf("pulumitest: CLI is for stacks that run through the CLI (YAML, Java)")
	}
	out, err := execIn(s.dir, s.env, "pulumi", append(args, "--stack", s.name)...)
	if err != nil {
		s.t.Fatalf("pulumi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
