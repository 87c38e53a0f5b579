// Package pulumitest runs the Pulumi examples (examples/pulumi-*) against the
// bridged provider, one operation at a time, so that a Go test can look at the
// cluster between operations.
//
// Every Stack gets its own file:// backend and PULUMI_HOME in temporary
// directories and never asks for a plugin from the network. Programs run the
// way a user runs them: the pulumi CLI (package toolchain) with its language
// hosts beside it, and pulumi-resource-k8sconnect (built once per test binary
// from this checkout) installed as a plugin with `pulumi plugin install
// resource k8sconnect <version> --file <archive>`, the archive being the one a
// release publishes (package release). The engine finds it at the version the
// SDKs ask for; nothing puts it on PATH. Where a program runs:
//
//   - New: the CLI in the example's own directory, examples/pulumi-<language>.
//     Its stack config file (Pulumi.<stack>.yaml, git-ignored) is removed
//     when the test ends. Java runs in a temporary project directory that
//     links to the example's files, so that Maven's target/ lands there.
//   - NewScenario: the CLI in such a linked project directory, whose
//     Pulumi.yaml names the scenario as its main program (TypeScript and
//     Python) or whose .mvn/maven.config names its main class (Java). Go's
//     scenarios are functions of one package, not main packages, so they run
//     through the Automation API.
//   - NewAutomation: the Automation API, which users call too: a driver in
//     tools/pulumi-automation runs the program unchanged as an inline program.
//   - NewYAMLProgram: the CLI on a YAML program the test writes.
//
// Preparing a language the first time builds what it needs: the Node SDK (tsc)
// and the example's node_modules; a virtualenv at examples/pulumi-python/.venv;
// sdk/java installed into the Maven repository the Java tests share (see
// prepareJava); the Go driver. Preparation is skipped while its inputs are
// unchanged (stamps in .work/pulumi) and serialized across test processes with
// file locks.
//
// The Python host of the toolchain (see package toolchain) does not read the
// project's runtime options, so Python stacks run with that virtualenv
// activated (VIRTUAL_ENV, its bin first on PATH), which a current pulumi
// does by itself from `virtualenv: .venv`.
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

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
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
	dir      string   // scratch directory of this stack
	project  string   // where the CLI runs (the project directory); "" with a driver
	env      []string // environment of every pulumi and driver process
	driver   []string // command that runs one operation through the Automation API
	deployed bool     // an Up may have left resources; Cleanup destroys them
	// configured is the Config the CLI last stored in the stack's settings
	// (as JSON): an operation with the same Config skips `pulumi config
	// set-all`, a CLI start of a third of a second. CLI and Shell forget it,
	// since either may change the settings.
	configured string
}

// New prepares lang (once per test binary) and returns a new, empty stack of
// its example's main program, run by the CLI in the example's own directory
// (Java: see the package doc), with the plugin installed. If the test ends
// with resources still deployed, a destroy runs in Cleanup.
func New(t testing.TB, lang Language) *Stack {
	t.Helper()
	return newCLIStack(t, lang, "", true)
}

// NewWithoutPlugin is New with nothing installed in the stack's PULUMI_HOME
// and automatic plugin downloads left on, as for a user who has only
// installed the SDK: InstallPlugin installs the plugin.
func NewWithoutPlugin(t testing.TB, lang Language) *Stack {
	t.Helper()
	return newCLIStack(t, lang, "", false)
}

// NewScenario is New for one of the example's scenario programs, which live
// beside the main program: examples/pulumi-typescript/scenarios/<name>.ts,
// examples/pulumi-python/scenarios/<name>.py, the Java main class
// com.k8sconnect.examples.scenarios.<name> and, through the Automation API
// (see the package doc), examples/pulumi-go/scenarios (registered by name in
// scenarios.Programs). They share the main program's project name, so the same
// config keys reach them. A YAML program of a test's own is written by the
// test: see NewYAMLProgram.
func NewScenario(t testing.TB, lang Language, scenario string) *Stack {
	t.Helper()
	switch lang {
	case YAML:
		t.Fatalf("pulumitest: YAML scenarios are written by the test; use NewYAMLProgram")
	case Go:
		return NewAutomation(t, lang, scenario)
	}
	return newCLIStack(t, lang, scenario, true)
}

// newCLIStack is a stack that the CLI runs, initialized in its project
// directory.
func newCLIStack(t testing.TB, lang Language, scenario string, withPlugin bool) *Stack {
	t.Helper()
	s := newStack(t, lang, scenario, withPlugin)
	switch {
	case lang == Java:
		s.linkProject(t, "")
		if scenario != "" {
			s.selectJavaMainClass(t, scenario)
		}
	case scenario != "":
		ext := map[Language]string{TypeScript: ".ts", Python: ".py"}[lang]
		s.linkProject(t, "scenarios/"+scenario+ext)
	default:
		s.project = s.example
	}
	s.initCLIStack()
	return s
}

// NewAutomation runs the example's main program (scenario "") or one of its
// scenarios through the language's Automation API driver in
// tools/pulumi-automation, as an inline program.
func NewAutomation(t testing.TB, lang Language, scenario string) *Stack {
	t.Helper()
	s := newStack(t, lang, scenario, true)
	switch lang {
	case Go:
		s.driver = []string{prepareGo(t, s.repo())}
	case TypeScript:
		s.driver = []string{"node", filepath.Join(s.repo(), "tools", "pulumi-automation", "nodejs", "run.js")}
	case Python:
		s.driver = []string{filepath.Join(preparePython(t, s.repo()), "bin", "python"),
			filepath.Join(s.repo(), "tools", "pulumi-automation", "python", "run.py")}
	default:
		t.Fatalf("pulumitest: no Automation API driver for %q", lang)
	}
	return s
}

// newStack prepares lang and makes a stack of the example's program (not yet
// initialized), with the plugin in its PULUMI_HOME if withPlugin.
func newStack(t testing.TB, lang Language, scenario string, withPlugin bool) *Stack {
	t.Helper()
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
	common := prepareCommon(t, repo)
	plugins := common.plugins
	if !withPlugin {
		plugins = ""
	}
	s.env = baseEnv(s.dir, common.pulumiDir, plugins)
	if !withPlugin {
		s.env = append(s.env, "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=false")
	}
	switch lang {
	case YAML, Go:
	case Java:
		s.env = append(s.env, prepareJava(t, repo)...)
	case TypeScript:
		prepareTypeScript(t, repo)
	case Python:
		// The virtualenv that examples/pulumi-python/Pulumi.yaml names, activated.
		venv := preparePython(t, repo)
		s.env = append(s.env, "VIRTUAL_ENV="+venv, "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+envValue(s.env, "PATH"))
	default:
		t.Fatalf("pulumitest: unknown language %q", lang)
	}
	// Cleanups run last-registered first: this one, after the destroy, which
	// needs the stack's config file (it holds the passphrase's salt).
	s.t.Cleanup(func() {
		if s.project == s.example {
			_ = os.Remove(filepath.Join(s.project, "Pulumi."+s.name+".yaml"))
		}
	})
	s.destroyOnCleanup()
	return s
}

func (s *Stack) repo() string {
	s.t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		s.t.Fatal(err)
	}
	return repo
}

// initCLIStack creates the stack in its project directory.
func (s *Stack) initCLIStack() {
	s.t.Helper()
	if out, err := execIn(s.project, s.env, "pulumi", "stack", "init", s.name, "--non-interactive"); err != nil {
		s.t.Fatalf("pulumi stack init: %v\n%s", err, out)
	}
}

// linkProject makes the stack's project directory: links to every file of the
// example (node_modules and the virtualenv included), so the CLI runs the
// example itself while Pulumi.<stack>.yaml (and a Java build's target/) are
// written here. With main, its Pulumi.yaml is the example's plus `main:`
// naming that file.
func (s *Stack) linkProject(t testing.TB, main string) {
	t.Helper()
	s.project = filepath.Join(s.dir, "project")
	if err := os.Mkdir(s.project, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(s.example)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case e.Name() == "Pulumi.yaml" && main == "":
		case strings.HasPrefix(e.Name(), "Pulumi.") && strings.HasSuffix(e.Name(), ".yaml"):
			continue // the project file, written below, and developers' stack config
		case e.Name() == "target" || e.Name() == ".mvn":
			continue // a developer's own Maven build and settings
		}
		if err := os.Symlink(filepath.Join(s.example, e.Name()), filepath.Join(s.project, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if main == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(s.example, filepath.FromSlash(main))); err != nil {
		t.Fatalf("pulumitest: no scenario %q: %v", s.scenario, err)
	}
	project, err := os.ReadFile(filepath.Join(s.example, "Pulumi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains("\n"+string(project), "\nmain:") {
		t.Fatalf("pulumitest: %s/Pulumi.yaml names its main program already", s.example)
	}
	project = append(bytes.TrimRight(project, "\n"), []byte("\nmain: "+main+"\n")...)
	if err := os.WriteFile(filepath.Join(s.project, "Pulumi.yaml"), project, 0o600); err != nil {
		t.Fatal(err)
	}
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
	dir := t.TempDir()
	s := &Stack{t: t, lang: YAML, name: "test" + randomSuffix(), scenario: "(the test's own program)", dir: dir, project: dir}
	s.env = Environ(t, s.dir)
	s.WriteYAML(source)
	s.initCLIStack()
	s.destroyOnCleanup()
	return s
}

// WriteYAML replaces the program of a stack made by NewYAMLProgram.
func (s *Stack) WriteYAML(source string) {
	s.t.Helper()
	if s.lang != YAML || s.example != "" {
		s.t.Fatalf("pulumitest: WriteYAML is for stacks made by NewYAMLProgram")
	}
	if err := os.WriteFile(filepath.Join(s.project, "Pulumi.yaml"), []byte(source), 0o600); err != nil {
		s.t.Fatal(err)
	}
}

// InstallPlugin installs the plugin into the stack's PULUMI_HOME as a user
// installs a release's download: `pulumi plugin install resource k8sconnect
// <version> --file <archive>`, at the version the SDKs ask for (PluginVersion).
func (s *Stack) InstallPlugin() {
	s.t.Helper()
	c := prepareCommon(s.t, s.repo())
	if out, err := execIn(s.project, s.env, "pulumi", installPluginArgs(c.version, c.archive)...); err != nil {
		s.t.Fatalf("pulumi plugin install: %v\n%s", err, out)
	}
}

// PluginVersion is the plugin version the SDKs ask the engine for.
func PluginVersion(t testing.TB) string {
	t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return prepareCommon(t, repo).version
}

// Resources are the types and names of the resources in the stack's state
// (`pulumi stack export`), the stack itself and providers left out, and the
// number of operations the engine left pending.
func (s *Stack) Resources() (resources []string, pending int) {
	s.t.Helper()
	dir := s.project
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
		if op != Up && op != Preview {
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
// and a language host rather than an Automation API driver.
func (s *Stack) viaCLI() bool { return s.driver == nil }

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
	mvn := filepath.Join(s.project, ".mvn")
	if err := os.Mkdir(mvn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mvn, "maven.config"), []byte("-DmainClass="+pkg+"."+scenario+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCLI runs one operation with the pulumi CLI in the project directory.
func (s *Stack) runCLI(op Operation, cfg Config, flags []Flag) (Result, error) {
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return Result{Operation: op}, err
	}
	if len(cfg) > 0 && string(cfgJSON) != s.configured {
		args := []string{"config", "set-all", "--stack", s.name}
		for _, k := range sortedKeys(cfg) {
			flag := "--plaintext"
			if cfg[k].Secret {
				flag = "--secret"
			}
			args = append(args, flag, k+"="+cfg[k].Value)
		}
		if out, err := execIn(s.project, s.env, "pulumi", args...); err != nil {
			return Result{Operation: op}, fmt.Errorf("pulumi config set-all: %w\n%s", err, out)
		}
		s.configured = string(cfgJSON)
	}

	events := filepath.Join(s.dir, "events-"+randomSuffix()+".json")
	args := []string{string(op), "--stack", s.name, "--non-interactive", "--event-log", events}
	if op != Preview {
		args = append(args, "--yes", "--skip-preview")
	}
	for _, f := range flags {
		args = append(args, string(f))
	}
	out, err := execIn(s.project, s.env, "pulumi", args...)
	res := Result{Operation: op, Log: out}
	if err != nil {
		return res, fmt.Errorf("%w\n%s", err, out)
	}
	if res.Changes, err = summaryChanges(events); err != nil {
		return res, fmt.Errorf("%w\n%s", err, out)
	}
	if op == Up {
		o, err := execIn(s.project, s.env, "pulumi", "stack", "output", "--stack", s.name, "--json", "--show-secrets")
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
// this checkout and its archive, the pulumi CLI and its language hosts), and
// returns the environment that Stack runs pulumi with, for tests that run
// pulumi on programs of their own: the inherited environment minus any Pulumi
// settings of the developer and KUBECONFIG, with a private file:// backend and
// PULUMI_HOME under dir, the plugin installed there, the CLI first on PATH, a
// config passphrase, no update checks or plugin downloads, and
// PULUMI_DEBUG_COMMANDS (for --event-log).
func Environ(t testing.TB, dir string) []string {
	t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	common := prepareCommon(t, repo)
	return baseEnv(dir, common.pulumiDir, common.plugins)
}

// EnvironWithoutPlugin is Environ with nothing built from this checkout and
// nothing installed: an empty PULUMI_HOME under dir, for tests that install
// the plugin and the SDKs as a user does, from a release's files.
func EnvironWithoutPlugin(t testing.TB, dir string) []string {
	t.Helper()
	return baseEnv(dir, cliDir(t), "")
}

// baseEnv is Environ's environment. plugins is the plugin directory of a
// PULUMI_HOME in which the plugin is installed, linked as this one's plugins/
// ("" leaves PULUMI_HOME empty).
func baseEnv(dir, pulumiDir, plugins string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PULUMI_") || strings.HasPrefix(k, "K8SCONNECT_PULUMI_") || k == "PATH" ||
			k == "KUBECONFIG" || k == "VIRTUAL_ENV" {
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(dir, "home")
	backend := filepath.Join(dir, "backend")
	for _, d := range []string{home, backend} {
		_ = os.MkdirAll(d, 0o755)
	}
	if plugins != "" {
		_ = os.Symlink(plugins, filepath.Join(home, "plugins"))
	}
	return append(env,
		// The CLI's directory holds its language hosts too: found there, on
		// PATH or beside the CLI, they are the same files, so the CLI does not
		// warn that it uses a host "from $PATH".
		"PATH="+pulumiDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PULUMI_HOME="+home,
		"PULUMI_BACKEND_URL=file://"+filepath.ToSlash(backend),
		"PULUMI_CONFIG_PASSPHRASE=k8sconnect-test",
		"PULUMI_SKIP_UPDATE_CHECK=true",
		// The Automation API drivers would run `pulumi version` before every
		// operation (a third of a CPU-second each); the CLI is the pinned one.
		"PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK=true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
		// --event-log, for the change summary of CLI runs.
		"PULUMI_DEBUG_COMMANDS=true",
	)
}

// envValue is the value of key in env (the last one, as exec uses).
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
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
	for _, d := range filepath.SplitList(envValue(env, "PATH")) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
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
// through the CLI with args and --stack, failing the test on an error, and
// returns what it printed (for `stack export`, `config set`, `stack output
// --json`, ...).
func (s *Stack) CLI(args ...string) string {
	s.t.Helper()
	if !s.viaCLI() {
		s.t.Fatalf("pulumitest: CLI is for stacks that run through the CLI, not the Automation API")
	}
	s.configured = ""
	out, err := execIn(s.project, s.env, "pulumi", append(args, "--stack", s.name)...)
	if err != nil {
		s.t.Fatalf("pulumi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Shell runs command with sh in the project directory of a stack that runs
// through the CLI, in the stack's environment, the way a user types a
// command from the docs: the shell expands ~, and the command acts on the
// selected stack, which is this one (stack init selects it). It fails the test
// on an error and returns what the command printed.
func (s *Stack) Shell(command string) string {
	s.t.Helper()
	if !s.viaCLI() {
		s.t.Fatalf("pulumitest: Shell is for stacks that run through the CLI, not the Automation API")
	}
	s.configured = ""
	out, err := execIn(s.project, s.env, "sh", "-c", command)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", command, err, out)
	}
	return out
}
