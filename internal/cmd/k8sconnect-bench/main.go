// Command k8sconnect-bench (`make bench`) measures k8sconnect against kubectl
// on the embedded cluster. With -workload configmaps (the default), for each N
// it makes N ConfigMaps plus their namespace with each tool and takes them
// through one life: create, a plan with no changes, an update of one data
// field in all N, destroy. With -workload bundle each tool installs a
// vendor's bundle (package bundles: prometheus-operator's ten CRDs of up to
// 830 KB and some sixty other objects) in the three steps users apply it in,
// plans, updates one data value in one ConfigMap, then one field deep in the
// largest CRD, and destroys it. An engine configuration named with _set
// (terraform_set, pulumi_set) holds the ConfigMaps or the bundle as one
// k8sconnect_manifest_set instead of one resource per object, against the
// same kubectl steps. With -workload chart each tool installs a
// chart of N objects as a Helm release (one k8sconnect_helm_release for the
// engines), plans it, upgrades one value (one object changes) and uninstalls
// it, against the helm CLI instead of kubectl. Per operation kubectl (or
// helm) runs first and then
// each engine, back to back, each tool with fresh objects in its own
// namespace (and, for a bundle, its own CRD group), so the ratios compare
// runs under the same machine load.
//
// Per step it reports seconds, the ratio to kubectl's (helm's) counterpart, API
// requests per object (the provider's K8SCONNECT_REQUEST_LOG; kubectl's -v=6
// log), the CPU time and peak RSS of the provider plugin processes (sampled
// from /proc; for kubectl, its own process), discovery and OpenAPI requests,
// how per-object create time grows from the smallest N to the largest, and
// the size of the state the engine keeps (its local file, the http backend's
// stored state, Pulumi's stack file).
// With -profile the plugins write CPU profiles (package cpuprofile) and the
// bench prints the top of the merged profiles of create and plan.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
	"github.com/k8sconnect/k8sconnect/provider/plugin/cpuprofile"
)

type options struct {
	workload workload
	ns       []int
	engines  []string
	ops      []string
	profile  bool
	keep     bool
	results  string
}

func main() {
	wl := flag.String("workload", string(configMaps), "what each tool applies: configmaps (N ConfigMaps and their namespace) "+
		"or bundle (a vendor's bundle of CRDs and objects, package bundles) or chart (a chart of N objects as a Helm release, against helm)")
	n := flag.String("n", "", "numbers of ConfigMaps (the configmaps workload; default 200,1000) or of a chart's objects "+
		"(the chart workload; default 200), comma-separated")
	engines := flag.String("engines", "terraform,tofu,pulumi", "engines to measure, comma-separated: "+
		strings.Join(engineNames, ", ")+" (_data: the engine alone; _provider_block: the connection in the provider's configuration;"+
		" pulumi_skip_checkpoints: the stack saved only at the end; _kubernetes_backend: the state in a Secret in the cluster;"+
		" _http_backend: the state in an http backend served by the bench; any of them but _data with _set appended:"+
		" the configmaps or bundle workload as one k8sconnect_manifest_set instead of one resource per object)")
	ops := flag.String("ops", "", "operations to measure, in an object's life order, "+
		"create always among them: create, plan (no changes), update, update-crd (a bundle's: one field deep in its largest CRD), "+
		"skip-preview (Pulumi's update without its preview), destroy; default: all of them that the workload has")
	profile := flag.Bool("profile", false, "have the plugins write CPU profiles and print the top of create's and plan's")
	keep := flag.Bool("keep", false, "keep the work directory (configurations, stacks, logs)")
	results := flag.String("results", "", "where to write the table as Markdown (default <repo>/.work/bench/results.md)")
	flag.Parse()
	o := options{profile: *profile, keep: *keep, results: *results}
	var err error
	if o.workload, err = parseWorkload(*wl); err == nil {
		if *ops == "" {
			*ops = o.workload.defaultOps()
		}
		if *n == "" {
			*n = o.workload.defaultNs()
		}
		if o.ns, err = parseNs(*n); err == nil {
			if o.engines, err = parseEngines(*engines); err == nil {
				if err = o.workload.checkEngines(o.engines); err == nil {
					o.ops, err = parseOps(*ops, o.workload)
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-bench:", err)
		os.Exit(2)
	}
	// An interrupt cancels the running command; run's deferred cleanups then
	// stop the cluster and remove the work directory.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-bench:", err)
		os.Exit(1)
	}
}

func parseNs(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-n %q: want positive numbers separated by commas", s)
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return slices.Compact(ns), nil
}

// engineNames are the configurations -engines takes: each engine, each
// engine alone (_data), with the connection in the provider's configuration
// (_provider_block), Pulumi without its checkpoint after every step, and
// Terraform and OpenTofu with the state in the cluster (_kubernetes_backend)
// or in an http backend (_http_backend).
var engineNames = []string{"terraform", "tofu", "pulumi",
	"terraform_data", "tofu_data", "pulumi_data",
	"terraform_provider_block", "tofu_provider_block", "pulumi_provider_block",
	"pulumi_skip_checkpoints", "terraform_kubernetes_backend", "tofu_kubernetes_backend",
	"terraform_http_backend", "tofu_http_backend"}

// parseEngines reads -engines: each of engineNames, or one of them but the
// _data ones with setSuffix, which holds the workload as one
// k8sconnect_manifest_set (set.go); the engine alone has no provider to
// hold a set.
func parseEngines(s string) ([]string, error) {
	var engines []string
	for _, f := range strings.Split(s, ",") {
		e := strings.TrimSpace(f)
		base, set := strings.CutSuffix(e, setSuffix)
		if !slices.Contains(engineNames, base) {
			return nil, fmt.Errorf("-engines %q: %q is none of %s, nor one of them with %s", s, e, strings.Join(engineNames, ", "), setSuffix)
		}
		if set && strings.HasSuffix(base, "_"+string(alone)) {
			return nil, fmt.Errorf("-engines %q: %s: the engine alone has no provider to hold a set", s, e)
		}
		if !slices.Contains(engines, e) {
			engines = append(engines, e)
		}
	}
	return engines, nil
}

// Operations, in the order of an object's life. updateSkip is Pulumi's update
// without its preview; its kubectl counterpart is update. updateCRD is a
// bundle's second update: one field deep in its largest CRD.
const (
	opCreate     = "create"
	opPlan       = "plan (no changes)"
	opUpdate     = "update"
	opUpdateCRD  = "update (CRD field)"
	opUpdateSkip = "update --skip-preview"
	opDestroy    = "destroy"
)

var operations = []string{opCreate, opPlan, opUpdate, opUpdateCRD, opUpdateSkip, opDestroy}

// opNames are -ops' names of the operations.
var opNames = map[string]string{"create": opCreate, "plan": opPlan, "update": opUpdate, "update-crd": opUpdateCRD,
	"skip-preview": opUpdateSkip, "destroy": opDestroy}

// parseOps reads -ops: the operations in life order, whatever order they are
// given in. Create is required: every other step works on what it made.
// Without destroy the objects stay in the bench's cluster, which stops at
// the end. update-crd is the bundle's only: ConfigMaps have no CRD.
func parseOps(s string, w workload) ([]string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		op, ok := opNames[strings.TrimSpace(f)]
		if !ok {
			return nil, fmt.Errorf("-ops %q: %q is none of create, plan, update, update-crd, skip-preview, destroy", s, f)
		}
		if op == opUpdateCRD && w != bundle {
			return nil, fmt.Errorf("-ops %q: update-crd changes a bundle's CRD; it needs -workload bundle", s)
		}
		want[op] = true
	}
	if !want[opCreate] {
		return nil, fmt.Errorf("-ops %q: create is needed, the other operations work on what it made", s)
	}
	var ops []string
	for _, op := range operations {
		if want[op] {
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// counterpart is the kubectl operation an engine's operation is compared with.
func counterpart(op string) string {
	if op == opUpdateSkip {
		return opUpdate
	}
	return op
}

// invocation is one timed command, or several run one after the other and
// timed together (kubectl's steps of a bundle), with untimed work before
// them: prepare (put the bundle's next version in place), then commands
// (terraform init, pulumi config set).
type invocation struct {
	args    []string
	then    [][]string
	dir     string
	env     []string
	prepare func() error
	before  [][]string
}

type tool interface {
	name() string
	// setup writes the tool's configuration for n objects in its namespace
	// (untimed).
	setup(ctx context.Context, n int) error
	// invocation is the command of op, or false if the tool has no such step.
	invocation(op string, n int) (invocation, bool)
	// isKubectl: measured as a client process (its own CPU, RSS and -v=6 log)
	// rather than through provider plugins.
	isKubectl() bool
	// stateBytes is the size of the state the engine keeps for n objects as
	// it stands now; 0 when the bench cannot tell (kubectl keeps none).
	stateBytes(n int) int64
}

// measurement is one timed step.
type measurement struct {
	tool     string
	n        int
	op       string
	duration time.Duration
	objects  int // N ConfigMaps and their namespace, or the bundle's objects
	requests requestStats
	cpu      time.Duration
	peakKiB  int64
	anonKiB  int64 // the plugins' largest sampled RssAnon; 0 for kubectl
	// apiServerCPU is the API server's CPU time while the step ran;
	// engineCPU the engine's own (terraform, tofu, pulumi and its language
	// host: the step's processes less the plugins), 0 for kubectl and helm.
	apiServerCPU, engineCPU time.Duration
	processes               int    // provider plugin processes seen
	profileDir              string // with -profile
	stateBytes              int64  // the engine's state after the operation; 0: none or unknown
	// requestsUnknown: the tool logs no requests (helm); the column is blank.
	requestsUnknown bool
}

type bench struct {
	o         options
	apiServer int          // the embedded cluster's kube-apiserver process
	state     *stateServer // the http backend's, when a configuration uses it
	work      string
	outDir    string
	kubectl   string
	reqLog    string
	tools     []tool
	results   []measurement
	versions  []string
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	load0 := loadAverage()
	var kubectl string
	if o.workload != chart {
		var err error
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			return errors.New("kubectl is not on PATH: the bench measures against kubectl (v1.32 was used); install it and run again")
		}
	}
	root, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	b := &bench{o: o, kubectl: kubectl, outDir: filepath.Join(root, ".work", "bench")}
	if o.results == "" {
		b.o.results = filepath.Join(b.outDir, "results.md")
	}
	if err := os.MkdirAll(b.outDir, 0o755); err != nil {
		return err
	}
	if o.profile {
		// Profiles of an earlier run would be merged with this one's.
		if err := os.RemoveAll(filepath.Join(b.outDir, "profiles")); err != nil {
			return err
		}
	}
	b.work, err = os.MkdirTemp("", "k8sconnect-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		defer fmt.Fprintln(os.Stderr, "work directory kept:", b.work)
	} else {
		defer os.RemoveAll(b.work)
	}
	b.reqLog = filepath.Join(b.work, "requests.log")
	if slices.ContainsFunc(o.engines, func(e string) bool {
		return strings.HasSuffix(strings.TrimSuffix(e, setSuffix), "_"+string(httpBackend))
	}) {
		if b.state, err = startStateServer(); err != nil {
			return err
		}
		defer b.state.Close()
	}

	if err := b.makeTools(ctx, root); err != nil {
		return err
	}
	progress("starting the embedded cluster")
	cluster, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	b.apiServer = apiServerPID(cluster.Dir)
	for _, t := range b.tools {
		switch t := t.(type) {
		case *kubectlTool:
			t.kubeconfig = cluster.KubeconfigPath
		case *helmTool:
			t.kubeconfig = cluster.KubeconfigPath
		case *terraformTool:
			t.kubeconfig = cluster.KubeconfigPath
		case *pulumiTool:
			t.kubeconfig = cluster.KubeconfigPath
		}
	}

	runErr := b.runAll(ctx)
	if runErr != nil && ctx.Err() != nil {
		runErr = fmt.Errorf("interrupted: %w", runErr)
	}
	if len(b.results) == 0 {
		return runErr
	}
	// A failed or interrupted run still reports what it measured: a long
	// run's first N is worth having.
	report := b.report(load0, loadAverage(), time.Since(began), runErr)
	fmt.Print("\n" + report.text)
	if err := os.WriteFile(b.o.results, []byte(report.markdown), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nThe table as Markdown: %s\n", b.o.results)
	if o.profile && ctx.Err() == nil {
		b.printProfiles(ctx)
	}
	if runErr != nil {
		return runErr
	}
	fmt.Printf("make bench took %s.\n", time.Since(began).Round(time.Second))
	return nil
}

// runAll measures every N (or the bundle), operation and tool, in that
// nesting.
func (b *bench) runAll(ctx context.Context) error {
	size := b.o.workload.sizeColumn()
	for _, n := range b.o.workload.sizes(b.o.ns) {
		if b.o.workload == bundle {
			progress("generating each tool's bundle of %d objects", n)
		}
		for _, t := range b.tools {
			if err := t.setup(ctx, n); err != nil {
				return fmt.Errorf("%s, %s=%d: %w", t.name(), size, n, err)
			}
		}
		for _, op := range b.o.ops {
			for _, t := range b.tools {
				inv, ok := t.invocation(op, n)
				if !ok {
					continue
				}
				m, err := b.measure(ctx, t, n, op, inv)
				if err != nil {
					return fmt.Errorf("%s %s, %s=%d: %w", t.name(), op, size, n, err)
				}
				requests := fmt.Sprintf("%5.2f", float64(m.requests.total)/float64(m.objects))
				if m.requestsUnknown {
					requests = "    -"
				}
				progress("%s=%d %-22s %-23s %6.1f s  %s requests/object  %6.1f CPU ms/object  %4d MiB  state %.2f MiB", size, n, op, t.name(),
					m.duration.Seconds(), requests,
					float64(m.cpu.Microseconds())/1000/float64(m.objects), m.peakKiB/1024, float64(m.stateBytes)/(1<<20))
				b.results = append(b.results, m)
			}
		}
	}
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// makeTools finds the engines and the baseline (kubectl, or helm for a
// chart) and builds the plugins they run.
func (b *bench) makeTools(ctx context.Context, root string) error {
	if b.o.workload == chart {
		if err := toolchain.Ensure(ctx, toolchain.Helm); err != nil {
			return err
		}
		helm, err := toolchain.Path(toolchain.Helm)
		if err != nil {
			return err
		}
		b.tools = append(b.tools, &helmTool{path: helm, work: b.work})
		b.versions = append(b.versions, "helm "+firstLine(helm, "version", "--short")+" (the pinned toolchain's)")
	} else {
		b.tools = append(b.tools, &kubectlTool{path: b.kubectl, work: b.work, workload: b.o.workload, ops: b.o.ops})
		b.versions = append(b.versions, "kubectl "+firstLine(b.kubectl, "version", "--client")+" (one request at a time)")
	}
	var terraformBin, pulumiPlugin string
	for _, e := range b.o.engines {
		config, set := strings.CutSuffix(e, setSuffix)
		engine, rest, _ := strings.Cut(config, "_")
		v := variant(rest)
		path, err := toolchain.Path(engine)
		if err != nil {
			return fmt.Errorf("%s: %w (make tools builds the toolchain)", e, err)
		}
		switch {
		case v == alone && engine == "pulumi":
			// The engine's own cost, as below, with Stash resources.
			if err := b.pulumiVersion(path); err != nil {
				return err
			}
			b.tools = append(b.tools, &pulumiTool{variant: alone, path: path, work: b.work, reqLog: b.reqLog,
				workload: b.o.workload, ops: b.o.ops})
			continue
		case v == alone:
			// The engine's own cost: terraform (or tofu) with the same N
			// objects as built-in terraform_data, no provider and no cluster.
			b.tools = append(b.tools, &terraformTool{engine: engine, variant: alone, path: path, work: b.work,
				workload: b.o.workload, ops: b.o.ops})
			continue
		}
		switch engine {
		case "terraform", "tofu":
			if terraformBin == "" {
				terraformBin = filepath.Join(b.work, "terraform-bin")
				progress("building terraform-provider-k8sconnect")
				if err := goBuild(ctx, root, terraformBin, "./provider/cmd/terraform-provider-k8sconnect"); err != nil {
					return err
				}
			}
			b.tools = append(b.tools, &terraformTool{engine: engine, path: path, work: b.work, bin: terraformBin, reqLog: b.reqLog,
				variant: v, set: set, workload: b.o.workload, ops: b.o.ops, state: b.state})
			// Once per engine, though it may run in two configurations.
			if line := versionLine(path, `^(Terraform|OpenTofu) v`) + " (-parallelism=10, its default)"; !slices.Contains(b.versions, line) {
				b.versions = append(b.versions, line)
			}
		case "pulumi":
			if err := b.pulumiVersion(path); err != nil {
				return err
			}
			if pulumiPlugin == "" {
				pulumiPlugin = filepath.Join(b.work, "pulumi-plugin")
				progress("building pulumi-resource-k8sconnect")
				if err := goBuild(ctx, filepath.Join(root, "bridge"), pulumiPlugin, "./cmd/pulumi-resource-k8sconnect"); err != nil {
					return err
				}
			}
			b.tools = append(b.tools, &pulumiTool{path: path, work: b.work, plugin: pulumiPlugin, reqLog: b.reqLog,
				variant: v, set: set, workload: b.o.workload, ops: b.o.ops})
		}
	}
	return nil
}

// pulumiVersion checks that the YAML host is beside the pulumi CLI at path
// and names both in the report, once however many configurations run.
func (b *bench) pulumiVersion(path string) error {
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "pulumi-language-yaml")); err != nil {
		return fmt.Errorf("the YAML language host is not beside %s (make tools builds it): %w", path, err)
	}
	v := "pulumi " + firstLine(path, "version") + " with the YAML language host (--parallel " + pulumiParallel(path) +
		", its default here; a file:// backend)"
	if !slices.Contains(b.versions, v) {
		b.versions = append(b.versions, v)
	}
	return nil
}

// goBuild builds the plugin pkg into the directory out as a release builds
// it (internal/release: no cgo, -trimpath, no symbol table or DWARF), since
// its memory is part of what is measured, and drops it from the page cache
// (see dropFromPageCache).
func goBuild(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out+"/", pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, o)
	}
	bin := filepath.Join(out, path.Base(pkg))
	if err := dropFromPageCache(bin); err != nil {
		return fmt.Errorf("dropping %s from the page cache: %w", bin, err)
	}
	return nil
}

// versionLine is the line of `<name> version` that matches pattern: tofu
// prints warnings about the CLI configuration before it.
func versionLine(name, pattern string) string {
	out, _ := exec.Command(name, "version").Output()
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(string(out), "\n") {
		if re.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return filepath.Base(name) + " (version unknown)"
}

func firstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return filepath.Base(name) + " (version unknown)"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// pulumiParallel is the default of `pulumi up --parallel` as the CLI's help
// states it: it depends on the CLI version and the machine.
func pulumiParallel(pulumi string) string {
	out, _ := exec.Command(pulumi, "up", "--help").Output()
	if m := regexp.MustCompile(`--parallel[^\n]*\(default (\d+)\)`).FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "default"
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// measure runs one step: its untimed preparation, then the timed command or
// commands.
func (b *bench) measure(ctx context.Context, t tool, n int, op string, inv invocation) (measurement, error) {
	m := measurement{tool: t.name(), n: n, op: op, objects: b.o.workload.objects(n)}
	// helm logs no requests that the bench could count.
	_, m.requestsUnknown = t.(*helmTool)
	env := inv.env
	if b.o.profile && !t.isKubectl() {
		m.profileDir = filepath.Join(b.outDir, "profiles", fmt.Sprintf("%s-%d-%s", t.name(), n, slug(op)))
		env = append(slices.Clone(env), cpuprofile.Env+"="+m.profileDir)
	}
	if inv.prepare != nil {
		if err := inv.prepare(); err != nil {
			return m, err
		}
	}
	for _, args := range inv.before {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = inv.dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return m, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(b.reqLog, nil, 0o600); err != nil {
		return m, err
	}
	var stdout, stderr bytes.Buffer
	var log []byte
	var err error
	apiServer0 := cpuOf(b.apiServer)
	var stepsCPU time.Duration // every process of the steps, plugins included
	start := time.Now()
	for _, args := range append([][]string{inv.args}, inv.then...) {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = inv.dir, env
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		// Interrupted, a tool gets SIGINT, as from a terminal, so that it can
		// stop its plugins; WaitDelay then bounds the wait.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		if err = cmd.Start(); err != nil {
			return m, err
		}
		var sampler *pluginSampler
		if !t.isKubectl() {
			sampler = startSampler(cmd.Process.Pid, 50*time.Millisecond)
		}
		err = cmd.Wait()
		if cmd.ProcessState != nil {
			// wait4 counts the descendants the process waited for: its plugins.
			stepsCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if sampler != nil {
			cpu, processes, peak, anon := sampler.Stop()
			m.cpu += cpu
			m.processes += processes
			m.peakKiB, m.anonKiB = max(m.peakKiB, peak), max(m.anonKiB, anon)
		}
		// Each step's output, for -keep and for a look at what a tool printed.
		log = append(append(append(log, strings.Join(args, " ")+"\n"...), stdout.Bytes()...), stderr.Bytes()...)
		if err != nil {
			err = fmt.Errorf("%s: %w\n%s%s", strings.Join(args, " "), err, tail(stdout.Bytes()), tail(stderr.Bytes()))
			break
		}
		if t.isKubectl() {
			m.requests = m.requests.add(classify(kubectlRequests(stderr.Bytes())))
			m.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				m.peakKiB = max(m.peakKiB, ru.Maxrss) // KiB on Linux
			}
		}
	}
	m.duration = time.Since(start)
	m.apiServerCPU = cpuOf(b.apiServer) - apiServer0
	if _, isHelm := t.(*helmTool); !t.isKubectl() && !isHelm {
		m.engineCPU = max(0, stepsCPU-m.cpu)
	}
	logName := filepath.Join(b.work, "logs", fmt.Sprintf("%s-%d-%s.log", t.name(), n, slug(op)))
	if os.MkdirAll(filepath.Dir(logName), 0o755) == nil {
		_ = os.WriteFile(logName, log, 0o600)
	}
	if err != nil {
		return m, err
	}
	if !t.isKubectl() {
		log, err := os.ReadFile(b.reqLog)
		if err != nil {
			return m, err
		}
		m.requests = classify(logLines(log))
	}
	m.stateBytes = t.stateBytes(n)
	return m, nil
}

// tail is the end of a command's output, for error messages.
func tail(b []byte) string {
	const keep = 6000
	if len(b) > keep {
		return "...\n" + string(b[len(b)-keep:])
	}
	return string(b)
}

func slug(op string) string {
	return strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(op, "-"), "-")
}

// printProfiles prints the top of each engine's merged create and plan
// profiles (every N together), and for a bundle those of every operation,
// since its update and destroy are where its large objects cost most; it
// keeps the text beside them.
func (b *bench) printProfiles(ctx context.Context) {
	dir := filepath.Join(b.outDir, "profiles")
	fmt.Printf("\nCPU profiles of the provider plugins: %s\n"+
		"With profiling on, the timings above include its cost. A profile starts in main, so the plugins' package\n"+
		"initialization is in the CPU column but not in the profiles.\n", dir)
	for _, t := range b.tools {
		if t.isKubectl() {
			continue
		}
		ops := []string{opCreate, opPlan}
		if b.o.workload != configMaps {
			ops = b.o.ops
		}
		for _, op := range ops {
			var files []string
			for _, m := range b.results {
				if m.tool == t.name() && m.op == op && m.profileDir != "" {
					fs, _ := filepath.Glob(filepath.Join(m.profileDir, "*.pprof"))
					if len(fs) == 0 {
						fmt.Printf("WARNING: %s %s at N=%d left no profile in %s\n", m.tool, op, m.n, m.profileDir)
					}
					files = append(files, nonEmpty(fs)...)
				}
			}
			if len(files) == 0 {
				continue
			}
			args := append([]string{"tool", "pprof", "-top", "-nodecount=20"}, files...)
			out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
			name := fmt.Sprintf("pprof-%s-%s.txt", t.name(), slug(op))
			_ = os.WriteFile(filepath.Join(b.outDir, name), out, 0o644)
			// Sorted by cumulative time, the callers (k8sconnect's own
			// functions among them) show where the flat time comes from.
			cumArgs := append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=60"}, files...)
			cum, _ := exec.CommandContext(ctx, "go", cumArgs...).CombinedOutput()
			cumName := fmt.Sprintf("pprof-%s-%s-cum.txt", t.name(), slug(op))
			_ = os.WriteFile(filepath.Join(b.outDir, cumName), cum, 0o644)
			fmt.Printf("\n== %s %s: go tool pprof -top -nodecount=20 of %d profiles (%s; by cumulative time: %s)\n",
				t.name(), op, len(files), filepath.Join(b.outDir, name), cumName)
			if err != nil {
				fmt.Printf("go tool pprof failed: %v\n", err)
			}
			fmt.Print(string(out))
		}
	}
}

func nonEmpty(files []string) []string {
	var out []string
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > 0 {
			out = append(out, f)
		}
	}
	return out
}

// report is the result table and what follows it, as text and as Markdown.
type report struct{ text, markdown string }

// tableHeader names the table's columns; the second is the workload's size,
// the fifth the baseline the engines' times are divided by.
func tableHeader(w workload) []string {
	return []string{"tool", w.sizeColumn(), "operation", "seconds", "vs " + w.baseline(), "requests/object", "CPU ms/object", "peak RSS MiB",
		"anon MiB", "state MiB", "engine CPU s", "API server CPU s"}
}

func (b *bench) report(load0, load1 string, took time.Duration, runErr error) report {
	host, _ := os.Hostname()
	var intro strings.Builder
	if runErr != nil {
		first, _, _ := strings.Cut(runErr.Error(), "\n")
		fmt.Fprintf(&intro, "INCOMPLETE: the run stopped (%s); below is what it measured before.\n", first)
	}
	fmt.Fprintf(&intro, "k8sconnect bench, %s, %s: %d CPUs, load average %s at the start and %s at the end; took %s.\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), load0, load1, took.Round(time.Second))
	switch b.o.workload {
	case bundle:
		fmt.Fprintf(&intro, "A vendor's bundle per tool (internal/testing/bundles): %s. Each tool installs its own, fresh, in a namespace and "+
			"a CRD group of its own; per-object figures divide by the bundle's objects. update: one data value in one ConfigMap; "+
			"update (CRD field): one int32 property deep in the largest CRD made int64.\n", bundleSummary())
	case chart:
		fmt.Fprintf(&intro, "A chart of N objects (%s) per tool, installed fresh as a Helm release in a namespace of its own that the "+
			"release creates (and leaves at destroy); per-object figures divide by N. The engines apply one k8sconnect_helm_release "+
			"(wait = false); the baseline is helm: create `helm upgrade --install --server-side=true`, plan (no changes) "+
			"`helm upgrade --dry-run=server`, update `helm upgrade --server-side=true`, destroy `helm uninstall`, none with --wait "+
			"(helm's default, hookOnly; the chart has no hooks), so neither side waits for readiness. update: the value only the "+
			"first ConfigMap holds, one object changed.\n", chartSummary(b.o.ns))
	default:
		fmt.Fprintf(&intro, "N ConfigMaps plus their namespace (N+1 objects) per tool, fresh, in a namespace of its own; per-object figures divide by N+1.\n")
	}
	if slices.ContainsFunc(b.tools, isSet) {
		intro.WriteString("The configurations named _set hold the same objects as one k8sconnect_manifest_set (ManifestSet) " +
			"whose path names a file of them that the bench writes beside the configuration and replaces before each " +
			"operation; its ApplySet parent, a Secret, in the objects' namespace. kubectl applies the same files as above " +
			"(no --applyset: it neither records nor prunes a set).\n")
	}
	intro.WriteString("\n") // blank lines around the list, for Markdown
	for _, v := range b.versions {
		fmt.Fprintf(&intro, "- %s\n", v)
	}
	intro.WriteString("\nCPU and peak RSS: the provider plugin processes (sampled every 50 ms); for kubectl (helm), its own process. " +
		"Anon: the largest anonymous part (heap, stacks) of a plugin's RSS sampled; the rest is mostly the binary's own pages. " +
		"Requests: the provider's request log; kubectl's -v=6 log (helm's are not counted). Pulumi's create and update include its preview (`pulumi up --yes`); " +
		"update --skip-preview is the same update without it. State: the size of what the engine keeps after the operation: " +
		"the local state file, the http backend's stored state, Pulumi's stack file (none for kubectl or helm; not measured for the kubernetes backend).\n")
	rows := tableRows(b.results, b.o.workload.baseline())
	var notes strings.Builder
	lines := summaryLines(b.results, b.o.workload.sizes(b.o.ns), b.o.workload.sizeColumn())
	lines = append(lines, setLines(b.results, b.o.workload.sizes(b.o.ns), b.o.workload.sizeColumn())...)
	lines = append(lines, targetLines(b.o.workload, b.results, b.o.ns)...)
	for _, line := range lines {
		notes.WriteString(line + "\n")
	}
	header := tableHeader(b.o.workload)
	text := intro.String() + "\n" + formatText(header, rows) + "\n" + notes.String()
	md := intro.String() + "\n" + formatMarkdown(header, rows) + "\n"
	for _, line := range strings.Split(strings.TrimSpace(notes.String()), "\n") {
		md += line + "  \n" // a Markdown line break
	}
	return report{text: text, markdown: md}
}

// tableRows formats the measurements, with each engine's time as a ratio to
// the baseline's (kubectl's, or helm's) at the same N and operation.
func tableRows(ms []measurement, baseline string) [][]string {
	var rows [][]string
	for _, m := range ms {
		vs := ""
		if m.tool != baseline {
			if k, ok := find(ms, baseline, m.n, counterpart(m.op)); ok {
				vs = fmt.Sprintf("%.2f", m.duration.Seconds()/k.duration.Seconds())
			}
		}
		rss := ""
		if m.peakKiB > 0 {
			rss = fmt.Sprintf("%.0f", float64(m.peakKiB)/1024)
		}
		anon := ""
		if m.anonKiB > 0 {
			anon = fmt.Sprintf("%.0f", float64(m.anonKiB)/1024)
		}
		state := ""
		if m.stateBytes > 0 {
			state = fmt.Sprintf("%.2f", float64(m.stateBytes)/(1<<20))
		}
		requests := fmt.Sprintf("%.2f", float64(m.requests.total)/float64(m.objects))
		if m.requestsUnknown {
			requests = ""
		}
		rows = append(rows, []string{
			m.tool, strconv.Itoa(m.n), m.op,
			fmt.Sprintf("%.1f", m.duration.Seconds()),
			vs,
			requests,
			fmt.Sprintf("%.1f", float64(m.cpu.Microseconds())/1000/float64(m.objects)),
			rss, anon, state, seconds(m.engineCPU), seconds(m.apiServerCPU),
		})
	}
	return rows
}

// seconds is d for a table cell, blank when it was not measured.
func seconds(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

func find(ms []measurement, tool string, n int, op string) (measurement, bool) {
	for _, m := range ms {
		if m.tool == tool && m.n == n && m.op == op {
			return m, true
		}
	}
	return measurement{}, false
}

// summaryLines are the notes under the table: Pulumi against Terraform,
// linearity, discovery and OpenAPI requests. size names the sizes ns: N, or
// a bundle's objects.
func summaryLines(ms []measurement, ns []int, size string) []string {
	var lines []string
	var tools []string
	for _, m := range ms {
		if !slices.Contains(tools, m.tool) {
			tools = append(tools, m.tool)
		}
	}
	// Each Pulumi configuration against Terraform's of the same kind, and
	// each against plain terraform, which the performance targets (docs/performance.md) name.
	for _, pair := range [][2]string{
		{"pulumi", "terraform"}, {"pulumi_skip_checkpoints", "terraform"}, {"pulumi_provider_block", "terraform_provider_block"},
		{"pulumi_data", "terraform_data"}, {"pulumi_data", "terraform"}, {"pulumi_set", "terraform_set"},
	} {
		for _, n := range ns {
			up, ok1 := find(ms, pair[0], n, opCreate)
			apply, ok2 := find(ms, pair[1], n, opCreate)
			preview, ok3 := find(ms, pair[0], n, opPlan)
			plan, ok4 := find(ms, pair[1], n, opPlan)
			if ok1 && ok2 && ok3 && ok4 {
				lines = append(lines, fmt.Sprintf("%s vs %s at %s=%d: up (create, preview included) %.2fx apply; preview (no changes) %.2fx plan.",
					pair[0], pair[1], size, n, up.duration.Seconds()/apply.duration.Seconds(), preview.duration.Seconds()/plan.duration.Seconds()))
			}
		}
	}
	if len(ns) > 1 {
		lo, hi := ns[0], ns[len(ns)-1]
		var parts []string
		for _, t := range tools {
			a, ok1 := find(ms, t, lo, opCreate)
			z, ok2 := find(ms, t, hi, opCreate)
			if ok1 && ok2 {
				perA := a.duration.Seconds() / float64(a.objects)
				perZ := z.duration.Seconds() / float64(z.objects)
				parts = append(parts, fmt.Sprintf("%s %.2f", t, perZ/perA))
			}
		}
		lines = append(lines, fmt.Sprintf("Linearity: create seconds per object at N=%d over N=%d (1.00 is linear): %s.", hi, lo, strings.Join(parts, ", ")))
	}
	for _, t := range tools {
		for _, n := range ns {
			var parts []string
			var total requestStats
			for _, op := range operations {
				if m, ok := find(ms, t, n, op); ok && !m.requestsUnknown {
					total = total.add(m.requests)
					p := fmt.Sprintf("%s %d", op, m.requests.discovery)
					if m.processes > 0 {
						p += fmt.Sprintf(" (%d plugin processes)", m.processes)
					}
					parts = append(parts, p)
				}
			}
			if len(parts) == 0 {
				continue
			}
			lines = append(lines, fmt.Sprintf("Discovery requests, %s %s=%d: %s; /openapi/v3 %d, /openapi/v2 %d in all.",
				t, size, n, strings.Join(parts, ", "), total.openAPIv3, total.openAPIv2))
			if total.openAPIv2 > 0 && t != "kubectl" {
				lines = append(lines, fmt.Sprintf("WARNING: %s downloaded /openapi/v2 at %s=%d; the provider must not need it.", t, size, n))
			}
		}
	}
	return lines
}
