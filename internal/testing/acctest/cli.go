package acctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/k8sconnect/k8sconnect/internal/testing/otherproviders"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// Workdir runs the real engine binary on a configuration directory with the
// provider binary installed through dev_overrides. terraform-plugin-testing
// cannot see warnings; tests of plan-time messages use this instead.
type Workdir struct {
	overrides map[string]string // provider source (namespace/type) -> directory of its binary
	t         testing.TB
	dir       string
	env       []string
	mirror    string // the providers' mirror for init, "" without one
}

// Diagnostic is one warning or error the engine printed.
type Diagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
}

// Result is one command's outcome.
type Result struct {
	Output      string
	Diagnostics []Diagnostic
	Err         error // non-nil when the command exited non-zero
}

// Changes is the plan's change summary: resources to add, change and destroy.
// It is -1 for all three when the engine printed no summary.
func (r Result) Changes() (add, change, remove int) {
	add, change, remove = -1, -1, -1
	sc := bufio.NewScanner(strings.NewReader(r.Output))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Changes struct {
				Add, Change, Remove int
			} `json:"changes"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "change_summary" {
			add, change, remove = line.Changes.Add, line.Changes.Change, line.Changes.Remove
		}
	}
	return add, change, remove
}

// Warnings are the diagnostics of severity warning, without the engine's own
// note about development overrides.
func (r Result) Warnings() []Diagnostic {
	var out []Diagnostic
	for _, d := range r.Diagnostics {
		if d.Severity == "warning" && !strings.Contains(d.Summary, "overrides") {
			out = append(out, d)
		}
	}
	return out
}

// Errors are the diagnostics of severity error.
func (r Result) Errors() []Diagnostic {
	var out []Diagnostic
	for _, d := range r.Diagnostics {
		if d.Severity == "error" {
			out = append(out, d)
		}
	}
	return out
}

// HasError reports an error diagnostic whose summary or detail contains every
// one of parts.
func (r Result) HasError(parts ...string) bool {
	for _, d := range r.Errors() {
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

var (
	providerBinOnce sync.Once
	providerBinDir  string
	providerBinErr  error
)

// providerBinary is the directory of the terraform-provider-k8sconnect that
// the engine runs: K8SCONNECT_TEST_PROVIDER_DIR when set (make test builds it
// once for all its test binaries, so that 20 of them do not link it 20
// times), else one built here, once per test binary.
// removeProviderBinary deletes the provider providerBinary built (80 MB per
// test binary, left in the temporary directory otherwise).
func removeProviderBinary() {
	if providerBinDir != "" && providerBinDir != os.Getenv(testProviderDirEnv) {
		_ = os.RemoveAll(providerBinDir)
	}
	otherproviders.Remove()
}

// testProviderDirEnv names a directory holding a terraform-provider-k8sconnect
// built from this checkout.
const testProviderDirEnv = "K8SCONNECT_TEST_PROVIDER_DIR"

func providerBinary() (string, error) {
	providerBinOnce.Do(func() {
		if dir := os.Getenv(testProviderDirEnv); dir != "" {
			if _, err := os.Stat(filepath.Join(dir, "terraform-provider-k8sconnect")); err != nil {
				providerBinErr = fmt.Errorf("%s=%s: %w (make test-provider builds it)", testProviderDirEnv, dir, err)
				return
			}
			providerBinDir = dir
			return
		}
		root, err := toolchain.RepoRoot()
		if err != nil {
			providerBinErr = err
			return
		}
		providerBinDir, err = os.MkdirTemp("", "k8sconnect-provider-")
		if err != nil {
			providerBinErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", providerBinDir, "./provider/cmd/terraform-provider-k8sconnect")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			providerBinErr = fmt.Errorf("building the provider: %v\n%s", err, out)
		}
	})
	return providerBinDir, providerBinErr
}

// NewWorkdir returns an empty configuration directory for the selected engine.
func NewWorkdir(t testing.TB) *Workdir {
	t.Helper()
	if testing.Short() {
		t.Skip("runs an engine against the embedded cluster; -short (make test-unit) runs only the tests that do not")
	}
	bin, err := providerBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := &Workdir{t: t, dir: dir, overrides: map[string]string{"k8sconnect/k8sconnect": bin}}
	w.writeCLIConfig()
	w.env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(dir, ".cli.tfrc"), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return w
}

// writeCLIConfig points the engine at the providers built here (dev_overrides,
// under both registries' host names) and at nothing else.
func (w *Workdir) writeCLIConfig() {
	w.t.Helper()
	var rc strings.Builder
	rc.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, source := range slices.Sorted(maps.Keys(w.overrides)) {
		for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
			fmt.Fprintf(&rc, "    %q = %q\n", host+"/"+source, w.overrides[source])
		}
	}
	rc.WriteString("  }\n")
	if w.mirror == "" {
		rc.WriteString("  direct {}\n}\n")
	} else {
		var sources []string
		for _, source := range slices.Sorted(maps.Keys(w.overrides)) {
			for _, host := range toolchain.Registries {
				sources = append(sources, fmt.Sprintf("%q", host+"/"+source))
			}
		}
		list := "[" + strings.Join(sources, ", ") + "]"
		fmt.Fprintf(&rc, "  filesystem_mirror {\n    path    = %q\n    include = %s\n  }\n  direct {\n    exclude = %s\n  }\n}\n",
			w.mirror, list, list)
	}
	if err := os.WriteFile(filepath.Join(w.dir, ".cli.tfrc"), []byte(rc.String()), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// InstallFromMirror lets `init` install the providers of this directory, as a
// configuration with a backend needs, from a mirror of the same binaries the
// development overrides run.
func (w *Workdir) InstallFromMirror() {
	w.t.Helper()
	w.mirror = filepath.Join(w.dir, ".mirror")
	for source, dir := range w.overrides {
		plugin := filepath.Join(dir, "terraform-provider-"+source[strings.LastIndex(source, "/")+1:])
		if err := toolchain.MirrorProvider(plugin, w.mirror, source); err != nil {
			w.t.Fatal(err)
		}
	}
	w.writeCLIConfig()
}

// UseStandIn lets this directory's state name another provider (see package
// otherproviders): the engine starts the stand-in for it.
func (w *Workdir) UseStandIn(src otherproviders.Source) {
	w.t.Helper()
	dir, err := otherproviders.Build(src)
	if err != nil {
		w.t.Fatal(err)
	}
	w.overrides[src.Address[strings.Index(src.Address, "/")+1:]] = dir
	w.writeCLIConfig()
}

// WriteState writes a terraform.tfstate (format version 4) holding one
// resource instance, as the provider at address would have recorded it.
func (w *Workdir) WriteState(address, resourceType, name string, schemaVersion int64, attributes map[string]any) {
	w.t.Helper()
	w.WriteStates(address, schemaVersion, StateResource{Type: resourceType, Name: name,
		Instances: []StateInstance{{Attributes: attributes}}})
}

// StateResource is one resource of a state WriteStates writes: its
// instances, one per for_each key (Key "") or the single one (no Key).
type StateResource struct {
	Type, Name string
	Instances  []StateInstance
}

// StateInstance is one instance of a StateResource.
type StateInstance struct {
	Key        string // the for_each key; "" for a resource without for_each
	Attributes map[string]any
}

// WriteStates is WriteState for several resources of one provider, some with
// for_each instances, as a configuration of many objects leaves its state.
func (w *Workdir) WriteStates(address string, schemaVersion int64, resources ...StateResource) {
	w.t.Helper()
	var rs []any
	for _, r := range resources {
		var instances []any
		for _, in := range r.Instances {
			i := map[string]any{"schema_version": schemaVersion, "attributes": in.Attributes, "sensitive_attributes": []any{}}
			if in.Key != "" {
				i["index_key"] = in.Key
			}
			instances = append(instances, i)
		}
		rs = append(rs, map[string]any{
			"mode": "managed", "type": r.Type, "name": r.Name,
			"provider": fmt.Sprintf("provider[%q]", address), "instances": instances,
		})
	}
	state := map[string]any{
		"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "00000000-0000-4000-8000-" + fmt.Sprintf("%012d", len(rs)),
		"outputs": map[string]any{}, "resources": rs,
	}
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfstate"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// Write replaces main.tf. The provider requirement is added for you.
func (w *Workdir) Write(config string) {
	w.t.Helper()
	full := "terraform {\n  required_providers {\n    k8sconnect = { source = \"k8sconnect/k8sconnect\" }\n  }\n}\n" + config
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(full), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// Apply runs apply -auto-approve.
func (w *Workdir) Apply() Result { return w.run("apply", "-auto-approve", "-input=false", "-json") }

// Plan runs plan.
func (w *Workdir) Plan() Result { return w.run("plan", "-input=false", "-json") }

// Destroy runs destroy -auto-approve.
func (w *Workdir) Destroy() Result { return w.run("destroy", "-auto-approve", "-input=false", "-json") }

// SetEnv sets an environment variable for the commands this directory runs.
func (w *Workdir) SetEnv(key, value string) { w.env = append(w.env, key+"="+value) }

// Dir is the configuration directory.
func (w *Workdir) Dir() string { return w.dir }

// Run runs the engine with any arguments.
func (w *Workdir) Run(args ...string) Result { return w.run(args...) }

func (w *Workdir) run(args ...string) Result {
	w.t.Helper()
	engine, err := toolchain.Path(Engine())
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(engine, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	res := Result{Err: cmd.Run()}
	res.Output = out.String()
	sc := bufio.NewScanner(strings.NewReader(res.Output))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Type       string     `json:"type"`
			Diagnostic Diagnostic `json:"diagnostic"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Type == "diagnostic" {
			res.Diagnostics = append(res.Diagnostics, line.Diagnostic)
		}
	}
	return res
}

// MustApply applies and fails the test on an error.
func (w *Workdir) MustApply() Result {
	w.t.Helper()
	r := w.Apply()
	if r.Err != nil {
		w.t.Fatalf("%s apply failed: %v\n%s", Engine(), r.Err, r.Output)
	}
	return r
}

// Human runs a command as a user at a terminal reads it (-input=false,
// -no-color; not for show, which takes no -input) and fails the test if it
// fails. The secret searches of its output stay with each test.
func (w *Workdir) Human(args ...string) Result {
	w.t.Helper()
	r := w.run(append(args, "-input=false", "-no-color")...)
	if r.Err != nil {
		w.t.Fatalf("%s %s: %v\n%s", Engine(), strings.Join(args, " "), r.Err, r.Output)
	}
	return r
}

// MustFail checks that a command failed the way a user sees it: it ran and
// exited non-zero.
func (w *Workdir) MustFail(r Result, what string) {
	w.t.Helper()
	var exit *exec.ExitError
	if !errors.As(r.Err, &exit) || exit.ExitCode() == 0 {
		w.t.Fatalf("%s %s: want a failed run with a non-zero exit code, got %v\n%s", Engine(), what, r.Err, r.Output)
	}
}

// StateList is `state list`: the addresses of the resources in state, none
// when there is no state yet.
func (w *Workdir) StateList() []string {
	w.t.Helper()
	r := w.run("state", "list")
	if r.Err != nil {
		if strings.Contains(r.Output, "No state file was found") {
			return nil
		}
		w.t.Fatalf("%s state list: %v\n%s", Engine(), r.Err, r.Output)
	}
	var out []string
	for _, l := range strings.Split(r.Output, "\n") {
		// Skips the engine's warning about development overrides.
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "k8sconnect_") {
			out = append(out, l)
		}
	}
	return out
}

// Cleanup destroys whatever the directory created when the test ends.
func (w *Workdir) Cleanup() {
	w.t.Cleanup(func() {
		if r := w.Destroy(); r.Err != nil {
			w.t.Errorf("%s destroy failed: %v\n%s", Engine(), r.Err, r.Output)
		}
	})
}

// StateAttribute is one top-level attribute of a resource in state, as JSON
// text for anything but a string; "" when the resource is not in state.
func (w *Workdir) StateAttribute(address, attr string) string {
	w.t.Helper()
	r := w.run("show", "-json")
	if r.Err != nil {
		w.t.Fatalf("%s show -json: %v\n%s", Engine(), r.Err, r.Output)
	}
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string                     `json:"address"`
					Values  map[string]json.RawMessage `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	// The engine may print a warning about development overrides first.
	out := r.Output[max(0, strings.Index(r.Output, "{")):]
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return ""
	}
	for _, res := range doc.Values.RootModule.Resources {
		if res.Address == address {
			raw := res.Values[attr]
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			return string(raw)
		}
	}
	return ""
}

// Start runs the engine with args in a process group of its own, so that a
// test can kill it with its provider plugins (faultproxy.KillTree), as a
// user's Ctrl-C-then-kill or a CI runner's timeout would. The command is
// killed at the end of the test if it is still running.
func (w *Workdir) Start(args ...string) (*exec.Cmd, *bytes.Buffer) {
	w.t.Helper()
	engine, err := toolchain.Path(Engine())
	if err != nil {
		w.t.Fatal(err)
	}
	cmd := exec.Command(engine, args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	return cmd, StartOwned(w.t, cmd)
}

// MustPlanNoChanges runs plan (with any extra args, e.g. -destroy) and fails
// the test unless it succeeds with nothing to add, change or destroy.
func (w *Workdir) MustPlanNoChanges(args ...string) {
	w.t.Helper()
	r := w.run(append([]string{"plan", "-input=false", "-json", "-detailed-exitcode"}, args...)...)
	if add, change, remove := r.Changes(); r.Err != nil || add != 0 || change != 0 || remove != 0 {
		w.t.Fatalf("%s plan %v: want no changes, have +%d ~%d -%d (%v)\n%s", Engine(), args, add, change, remove, r.Err, r.Output)
	}
}
