// Package toolchain pins the binaries the project's tests and demos run: the
// control plane of the embedded cluster (kube-apiserver, kube-controller-manager,
// kube-scheduler, etcd, kwok), the pulumi CLI with its language hosts,
// OpenTofu, and the helm CLI of Helm 4 and of Helm 3. Each is built from the Go module of this
// repository that pins it, a small one under tools/<dir> or, for three tools
// whose code the bridge's tests compile too, bridge/ (see the table below),
// and kept in a per-machine cache, so a fresh clone on the same machine
// reuses what an earlier clone built:
//
//	$K8SCONNECT_TOOLS_DIR                       (if set), else
//	os.UserCacheDir()/k8sconnect/tools          (~/.cache/k8sconnect/tools on Linux)
//	  <name>-<version>/<binary>                 (the binary is <name>, or helm for Helm3)
//
// The pulumi CLI and its language hosts (YAML, Java; Node.js, Python and Go)
// share one directory, pulumi-<version>+yaml-<version>+hosts-<version>, laid
// out as a pulumi release is: the CLI looks for its bundled language hosts
// next to its own executable before the plugins in PULUMI_HOME, so running
// Path("pulumi") is enough, for every PULUMI_HOME, with nothing to install
// per stack. That directory is also the one to put on PATH if a caller
// prefers (the CLI warns "using pulumi-language-X from $PATH" only when the
// host found on PATH is not the one beside it). PulumiTools lists them.
//
// terraform is not built (its module cannot be built from the module proxy):
// Path("terraform") returns $K8SCONNECT_TERRAFORM or the terraform on PATH.
//
// `make tools` (go run ./internal/cmd/k8sconnect-dev tools) builds everything;
// Ensure does the same from Go.
package toolchain

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RepoModule is the module path of this repository; Ensure looks for the go.mod
// that declares it to find tools/.
const RepoModule = "github.com/k8sconnect/k8sconnect"

// Environment variables read by this package.
const (
	EnvToolsDir  = "K8SCONNECT_TOOLS_DIR" // cache root for the built binaries
	EnvRepo      = "K8SCONNECT_REPO"      // repository root, when not run from inside it
	EnvTerraform = "K8SCONNECT_TERRAFORM" // terraform binary; default: terraform on PATH
)

// tool is one pinned binary.
type tool struct {
	name    string // what callers ask for; also the binary's file name, unless bin is set
	bin     string // the binary's file name, when it is not name
	version string
	modDir  string // the directory, from the repository's root, of the go.mod that pins it
	module  string // the Go module that modDir/go.mod must require at version
	pkg     string // the main package to build
	dir     string // cache subdirectory; default name-version
	ldflags []string
	env     []string
	// files are plain files of module (paths inside it) that the binary needs
	// beside itself; they are copied into its directory before the binary.
	files []string
}

const kubeVersion = "v1.37.2"

func kubeLDFlags() []string {
	const p = "k8s.io/component-base/version."
	return []string{
		"-X", p + "gitVersion=" + kubeVersion,
		"-X", p + "gitMajor=1",
		"-X", p + "gitMinor=" + strings.Split(kubeVersion, ".")[1],
		"-X", p + "gitTreeState=clean",
		// buildDate stays at the package default (the Unix epoch) so that the
		// build is reproducible and hits the cache; gitCommit is unknown here.
	}
}

const (
	pulumiVersion     = "v3.256.0"
	pulumiYAMLVersion = "v1.38.1"
	// The Node.js, Python and Go hosts are packages of sdk/v3 up to v3.66.0,
	// its last release that holds them (later ones live in modules the proxy
	// does not serve). They speak the language-host protocol of the CLI above,
	// which falls back to the calls these older hosts implement, but they read
	// runtime options only as command-line flags, which this CLI no longer
	// passes: see the README's Pulumi section for what that changes.
	pulumiHostsVersion = "v3.66.0"
	pulumiDir          = "pulumi-" + pulumiVersion + "+yaml-" + pulumiYAMLVersion + "+hosts-" + pulumiHostsVersion
	pulumiSDK          = "github.com/pulumi/pulumi/sdk/v3"
	pulumiJavaVersion  = "v1.34.0"
)

// PulumiTools are the pulumi CLI and the language hosts it runs programs with.
var PulumiTools = []string{"pulumi", "pulumi-language-yaml", "pulumi-language-java",
	"pulumi-language-nodejs", "pulumi-language-python", "pulumi-language-go"}

// tools is the one table of pinned binaries. The version must match what
// modDir/go.mod requires (Ensure checks).
//
// A tool whose dependencies the tests compile anyway is built in the module
// whose tests do: the YAML and Java language hosts and the helm CLI in
// bridge/, which requires each at the pinned version (its go.mod names them
// in tool directives). Built there, with the same flags as the tests, each
// shares its compiled packages with the bridge's tests in Go's build cache:
// after those, helm takes 12 s to build and each host 3 s, where a module of
// their own compiled every package again, since a single dependency at
// another version (golang.org/x/sys, say) changes the build key of
// everything above it. The others keep a module under tools/: their
// dependencies are not all the tests' (kubernetes itself, OpenTofu's and the
// pulumi CLI's own modules), or do not build at the bridge's versions
// (the pulumi CLI needs olekukonko/tablewriter v0, the bridge has v1). The
// same reason puts etcd and kwok in tools/kubernetes, beside the control
// plane whose packages they mostly share. tofu keeps its own: its fork of
// hashicorp/hcl/v2 is a replace of one version, which a module shared with
// the pulumi CLI (which requires a later hcl) would not apply. The Helm 3
// CLI keeps its own too: helm.sh/helm/v3 is a module the tests never compile,
// and in bridge/ its requirements would move the bridge's.
var tools = []tool{
	{name: "kube-apiserver", version: kubeVersion, modDir: "tools/kubernetes", module: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-apiserver", ldflags: kubeLDFlags()},
	{name: "kube-controller-manager", version: kubeVersion, modDir: "tools/kubernetes", module: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", ldflags: kubeLDFlags()},
	{name: "kube-scheduler", version: kubeVersion, modDir: "tools/kubernetes", module: "k8s.io/kubernetes",
		pkg: "k8s.io/kubernetes/cmd/kube-scheduler", ldflags: kubeLDFlags()},
	{name: "etcd", version: "v3.7.0", modDir: "tools/kubernetes", module: "go.etcd.io/etcd/server/v3",
		pkg: "go.etcd.io/etcd/server/v3"},
	{name: "kwok", version: "v0.8.0", modDir: "tools/kubernetes", module: "sigs.k8s.io/kwok",
		pkg: "sigs.k8s.io/kwok/cmd/kwok"},
	{name: "pulumi", version: pulumiVersion, modDir: "tools/pulumi", module: "github.com/pulumi/pulumi/pkg/v3",
		pkg: "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", dir: pulumiDir,
		ldflags: []string{"-X", "github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=" + pulumiVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"}},
	{name: "pulumi-language-yaml", version: pulumiYAMLVersion, modDir: "bridge", module: "github.com/pulumi/pulumi-yaml",
		pkg: "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml", dir: pulumiDir,
		ldflags: []string{"-X", "github.com/pulumi/pulumi-yaml/pkg/version.Version=" + pulumiYAMLVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"}},
	{name: "pulumi-language-nodejs", version: pulumiHostsVersion, modDir: "tools/pulumi-language-hosts", module: pulumiSDK,
		pkg: pulumiSDK + "/nodejs/cmd/pulumi-language-nodejs", dir: pulumiDir,
		ldflags: []string{"-X", pulumiSDK + "/go/common/version.Version=" + pulumiHostsVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"}},
	{name: "pulumi-language-python", version: pulumiHostsVersion, modDir: "tools/pulumi-language-hosts", module: pulumiSDK,
		pkg: pulumiSDK + "/python/cmd/pulumi-language-python", dir: pulumiDir,
		ldflags: []string{"-X", pulumiSDK + "/go/common/version.Version=" + pulumiHostsVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"},
		// The host runs programs through this script, which it looks for
		// beside its own executable.
		files: []string{"python/cmd/pulumi-language-python-exec"}},
	{name: "pulumi-language-go", version: pulumiHostsVersion, modDir: "tools/pulumi-language-hosts", module: pulumiSDK,
		pkg: pulumiSDK + "/go/pulumi-language-go", dir: pulumiDir,
		ldflags: []string{"-X", pulumiSDK + "/go/common/version.Version=" + pulumiHostsVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"}},
	// The Java language host, next to the CLI so that the CLI finds it as a
	// bundled host. github.com/pulumi/pulumi-java at the release whose codegen
	// writes sdk/java (the bridge module requires it through
	// pulumi-terraform-bridge). The shared directory's name does not carry
	// this version: a new one is built where the old binary is removed.
	{name: "pulumi-language-java", version: pulumiJavaVersion, modDir: "bridge", module: "github.com/pulumi/pulumi-java",
		pkg: "github.com/pulumi/pulumi-java/pkg/cmd/pulumi-language-java", dir: pulumiDir,
		ldflags: []string{"-X", "github.com/pulumi/pulumi-java/pkg/version.Version=" + pulumiJavaVersion},
		env:     []string{"GONOSUMDB=github.com/pulumi"}},
	{name: "tofu", version: "v1.12.6", modDir: "tools/opentofu", module: "github.com/opentofu/opentofu",
		pkg: "github.com/opentofu/opentofu/cmd/tofu",
		// Without this tofu reports itself as a "-dev" prerelease.
		ldflags: []string{"-X", "github.com/opentofu/opentofu/version.dev=no"}},
	// The version the provider module renders charts with (go.mod requires
	// helm.sh/helm/v4 at it), so the CLI and the provider agree. Without the
	// -X, `helm version` reports only "v4.3".
	{name: Helm, version: helmVersion, modDir: "bridge", module: "helm.sh/helm/v4",
		pkg:     "helm.sh/helm/v4/cmd/helm",
		ldflags: []string{"-X", "helm.sh/helm/v4/internal/version.version=" + helmVersion}},
	// Helm 3, for the tests that adopt a release its `helm install` made. The
	// binary is named helm, as users have it: Helm 3 names the field manager
	// of what it writes after its own executable, so a binary named helm3
	// would write as "helm3", a manager no real release has. Without the -X,
	// `helm version` reports only "v3.22".
	{name: Helm3, bin: "helm", version: helm3Version, modDir: "tools/helm3", module: "helm.sh/helm/v3",
		pkg:     "helm.sh/helm/v3/cmd/helm",
		ldflags: []string{"-X", "helm.sh/helm/v3/internal/version.version=" + helm3Version}},
}

// Helm is the name of the pinned helm CLI: a test calls Ensure(ctx, Helm) and
// then Path(Helm).
const Helm = "helm"

const helmVersion = "v4.3.1"

// Helm3 is the name of the pinned Helm 3 CLI: Ensure(ctx, Helm3), then
// Path(Helm3), which ends in /helm (see the table).
const Helm3 = "helm3"

const helm3Version = "v3.22.0"

// ClusterTools are the binaries the embedded cluster runs.
var ClusterTools = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// Names lists every binary Ensure can build, in build order.
func Names() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	return names
}

// Version is the pinned version of a tool ("" if unknown). For terraform,
// which is not pinned, it is "".
func Version(name string) string {
	if t, ok := lookup(name); ok {
		return t.version
	}
	return ""
}

func lookup(name string) (tool, bool) {
	for _, t := range tools {
		if t.name == name {
			return t, true
		}
	}
	return tool{}, false
}

// CacheDir is the root of the tool cache: $K8SCONNECT_TOOLS_DIR, else
// os.UserCacheDir()/k8sconnect/tools.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvToolsDir); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the tools (%v): set %s", err, EnvToolsDir)
	}
	return filepath.Join(d, "k8sconnect", "tools"), nil
}

func (t tool) path(root string) string {
	dir := t.dir
	if dir == "" {
		dir = t.name + "-" + t.version
	}
	bin := t.bin
	if bin == "" {
		bin = t.name
	}
	return filepath.Join(root, dir, bin)
}

// Path returns the absolute path of a built tool, or an error that says how to
// build it. It never builds anything (see Ensure).
func Path(name string) (string, error) {
	if name == "terraform" {
		return terraformPath()
	}
	t, ok := lookup(name)
	if !ok {
		return "", fmt.Errorf("toolchain: unknown tool %q (known: %s, terraform)", name, strings.Join(Names(), ", "))
	}
	root, err := CacheDir()
	if err != nil {
		return "", err
	}
	p := t.path(root)
	if !isExecutable(p) {
		return "", fmt.Errorf("%s %s not built (looked for %s): run `make tools`", t.name, t.version, p)
	}
	return p, nil
}

func terraformPath() (string, error) {
	if p := os.Getenv(EnvTerraform); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%s=%s is not an executable file", EnvTerraform, p)
		}
		return filepath.Abs(p)
	}
	p, err := exec.LookPath("terraform")
	if err != nil {
		return "", fmt.Errorf("terraform not found on PATH: install it, set %s, or run the suite under tofu (K8SCONNECT_ENGINE=tofu)", EnvTerraform)
	}
	return filepath.Abs(p)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Ensure builds the named tools that are not in the cache yet (all of them if
// no name is given), one after the other, logging each build and its duration
// with the standard logger. Builds run `go build` inside tools/<dir> of this
// repository, found from the working directory or $K8SCONNECT_REPO. Several
// processes may call Ensure at once: a lock file serializes each tool's build
// and the result is renamed into place atomically.
func Ensure(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		names = Names()
	}
	var todo []tool
	for _, n := range names {
		if n == "terraform" {
			if _, err := terraformPath(); err != nil {
				return err
			}
			continue
		}
		t, ok := lookup(n)
		if !ok {
			return fmt.Errorf("toolchain: unknown tool %q (known: %s)", n, strings.Join(Names(), ", "))
		}
		todo = append(todo, t)
	}
	root, err := CacheDir()
	if err != nil {
		return err
	}
	var repo string
	for _, t := range todo {
		if isExecutable(t.path(root)) {
			continue
		}
		if repo == "" {
			if repo, err = RepoRoot(); err != nil {
				return fmt.Errorf("cannot build %s: %w", t.name, err)
			}
		}
		if err := build(ctx, repo, root, t); err != nil {
			return err
		}
	}
	return nil
}

// Built is the path of the named tool, built first if the cache lacks it
// (Ensure, then Path): what a test that runs one tool needs.
func Built(ctx context.Context, name string) (string, error) {
	if err := Ensure(ctx, name); err != nil {
		return "", err
	}
	return Path(name)
}

// RepoRoot finds this repository: $K8SCONNECT_REPO, else the nearest directory
// at or above the working directory whose go.mod declares RepoModule.
func RepoRoot() (string, error) {
	if r := os.Getenv(EnvRepo); r != "" {
		if mod, _ := modulePath(filepath.Join(r, "go.mod")); mod != RepoModule {
			return "", fmt.Errorf("%s=%s: no go.mod for %s there", EnvRepo, r, RepoModule)
		}
		return filepath.Abs(r)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if mod, _ := modulePath(filepath.Join(d, "go.mod")); mod == RepoModule {
			return d, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("the %s repository is not at or above %s: run from inside a clone or set %s", RepoModule, wd, EnvRepo)
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

// requiredVersion returns the version at which gomod requires module.
func requiredVersion(gomod, module string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "require" {
			f = f[1:]
		}
		if len(f) == 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", gomod, module)
}

func build(ctx context.Context, repo, root string, t tool) error {
	modDir := filepath.Join(repo, t.modDir)
	v, err := requiredVersion(filepath.Join(modDir, "go.mod"), t.module)
	if err != nil {
		return fmt.Errorf("cannot build %s: %w", t.name, err)
	}
	if v != t.version {
		return fmt.Errorf("cannot build %s: %s/go.mod requires %s %s but internal/toolchain pins %s: update the table in internal/toolchain",
			t.name, t.modDir, t.module, v, t.version)
	}
	dst := t.path(root)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(dst + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if isExecutable(dst) { // built by another process while we waited
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+t.name+".building-*")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())

	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	env = append(env, t.env...)
	ldflags := append([]string{"-s", "-w"}, t.ldflags...)
	// No -trimpath: it changes the build key of every package, so a tool
	// built with it would share nothing with the tests (see the table).
	args := []string{"build", "-buildvcs=false", "-ldflags", strings.Join(ldflags, " "), "-o", tmp.Name(), t.pkg}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = modDir
	cmd.Env = env
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	log.Printf("toolchain: building %s %s (go build %s in %s)", t.name, t.version, t.pkg, t.modDir)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s %s in %s: %w", t.name, t.version, modDir, err)
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return err
	}
	// The files first: a binary in place means its files are too.
	if err := copyModuleFiles(ctx, modDir, env, t, filepath.Dir(dst)); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	log.Printf("toolchain: built %s %s in %s -> %s", t.name, t.version, time.Since(start).Round(100*time.Millisecond), dst)
	return nil
}

// copyModuleFiles copies t.files from t.module, as tools/<dir>/go.mod pins
// it in the module cache (go build has just downloaded it), into dir.
func copyModuleFiles(ctx context.Context, modDir string, env []string, t tool, dir string) error {
	if len(t.files) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", t.module)
	cmd.Dir = modDir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("locating %s for the files of %s: %w", t.module, t.name, err)
	}
	src := strings.TrimSpace(string(out))
	for _, f := range t.files {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f)))
		if err != nil {
			return fmt.Errorf("a file %s needs: %w", t.name, err)
		}
		tmp, err := os.CreateTemp(dir, ".file.copying-*")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o755), os.Rename(tmp.Name(), filepath.Join(dir, filepath.Base(filepath.FromSlash(f))))); err != nil {
			_ = os.Remove(tmp.Name())
			return err
		}
	}
	return nil
}

// lockFile takes an exclusive advisory lock on path, waiting for it (and
// saying so) if another process holds it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX | syscall.LOCK_NB
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			log.Printf("toolchain: waiting for another process building %s", strings.TrimSuffix(filepath.Base(path), ".lock"))
			how = syscall.LOCK_EX
			continue
		}
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
