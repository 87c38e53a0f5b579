package bridge_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/release"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// TestInstallFromRelease installs k8sconnect from a release's files the way
// users do, with no dev_overrides and nothing taken from this checkout but
// those files and the examples: `terraform init` and `tofu init` from a
// filesystem mirror of the provider zip, `pulumi plugin install --file` of the
// plugin archive, `npm install` of the packed Node SDK, `pip install` of the
// wheel. Each then runs its quickstart against the cluster: create, nothing
// left to change, destroy. The release is built by release.Build, as `make
// release` builds it, for this machine's platform only (cross-builds of every
// platform stay in `make release`) and with the tests' build flags
// (Options.HostBuild).
func TestInstallFromRelease(t *testing.T) {
	skipShort(t)
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cluster := localcluster.Shared(t)
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	version := k8sconnect.Version
	host := release.HostPlatform()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), pulumitest.PrepareTimeout)
	defer cancel()
	a, err := release.Build(ctx, release.Options{
		Repo:      repo,
		Version:   version,
		Platforms: []release.Platform{host},
		SDKs:      []release.SDK{release.NodeJS, release.Python},
		Out:       t.TempDir(),
		// What is tested is the packaging and the install; the release's
		// own build flags would compile everything again (cold: minutes).
		HostBuild: true,
		Log:       testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("release %s for %s built in %s", version, host, time.Since(start).Round(time.Second))

	q := quickstart{t: t, cs: cs, kubeconfig: cluster.KubeconfigPath}
	for _, engine := range []struct{ name, registry string }{
		{"terraform", "registry.terraform.io"},
		{"tofu", "registry.opentofu.org"},
	} {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			q := q
			q.t = t
			q.terraform(engine.name, engine.registry, version, a.TerraformZips[host])
		})
	}
	for _, lang := range []pulumitest.Language{pulumitest.TypeScript, pulumitest.Python} {
		t.Run(string(lang), func(t *testing.T) {
			t.Parallel()
			q := q
			q.t = t
			q.pulumi(lang, repo, version, a)
		})
	}
}

// quickstart runs a quickstart and checks the cluster after each step.
type quickstart struct {
	t          *testing.T
	cs         kubernetes.Interface
	kubeconfig string
}

// terraform installs the provider zip into a filesystem mirror that the CLI
// configuration makes the only source of k8sconnect (direct installation
// excludes it), as a user does with a release's download, and runs
// examples/terraform/quickstart with the engine.
func (q quickstart) terraform(engine, registry, version, zip string) {
	t := q.t
	bin, err := toolchain.Path(engine)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	source := registry + "/k8sconnect/k8sconnect"
	// The packed layout: <mirror>/<host>/<namespace>/<type>/<the zip as released>.
	mirror := filepath.Join(dir, "mirror")
	pkgDir := filepath.Join(mirror, filepath.FromSlash(source))
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(zip, filepath.Join(pkgDir, filepath.Base(zip))); err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(dir, "cli.tfrc")
	writeFile(t, cliConfig, fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %q
    include = [%q]
  }
  direct {
    exclude = [%q]
  }
}
`, filepath.ToSlash(mirror), source, source))

	work := filepath.Join(dir, "config")
	examples, err := filepath.Glob(filepath.Join(mustRepo(t), "examples", "terraform", "quickstart", "*.tf"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("the quickstart's files: %v %v", examples, err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range examples {
		if err := copyFile(f, filepath.Join(work, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	// A prerelease is only ever selected by an exact version constraint; a
	// release would be too by a range, but a user pins one either way.
	writeFile(t, filepath.Join(work, "version_override.tf"), fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = {
      source  = "k8sconnect/k8sconnect"
      version = %q
    }
  }
}
`, version))

	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"TF_PLUGIN_CACHE_DIR=")
	cli := func(args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), pulumitest.OperationTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-chdir=" + work}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustCLI := func(args ...string) {
		t.Helper()
		if out, err := cli(args...); err != nil {
			t.Fatalf("%s %s: %v\n%s", engine, args[0], err, out)
		}
	}

	mustCLI("init", "-input=false", "-no-color")
	// The lock file records the version installed from the mirror and the
	// hash of that zip's content.
	lock, err := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	h1, err := dirhash.HashZip(zip, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`provider "` + source + `"`, `version     = "` + version + `"`, `"` + h1 + `"`} {
		if !strings.Contains(string(lock), want) {
			t.Errorf(".terraform.lock.hcl lacks %s:\n%s", want, lock)
		}
	}

	namespace := "install-" + engine
	vars := []string{"-input=false", "-no-color", "-var", "kubeconfig_path=" + q.kubeconfig, "-var", "namespace=" + namespace}
	t.Cleanup(func() {
		if _, err := q.cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{}); err == nil {
			if out, err := cli(append([]string{"destroy", "-auto-approve"}, vars...)...); err != nil {
				t.Logf("%s destroy after a failure: %v\n%s", engine, err, out)
			}
		}
	})
	mustCLI(append([]string{"apply", "-auto-approve"}, vars...)...)
	q.expectGreeting(namespace, "hello")
	// Nothing left to change: -detailed-exitcode exits 2 on a pending change.
	if out, err := cli(append([]string{"plan", "-detailed-exitcode"}, vars...)...); err != nil {
		t.Fatalf("%s plan after apply: %v (exit 2: changes pending)\n%s", engine, err, out)
	}
	mustCLI(append([]string{"destroy", "-auto-approve"}, vars...)...)
	q.expectGone(namespace)
}

// pulumi installs the plugin from its archive into an empty PULUMI_HOME and
// the SDK package into a copy of examples/pulumi-<lang>, and runs it.
func (q quickstart) pulumi(lang pulumitest.Language, repo, version string, a *release.Artifacts) {
	t := q.t
	dir := t.TempDir()
	env := pulumitest.EnvironWithoutPlugin(t, dir)
	pulumi, err := toolchain.Path("pulumi")
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(dir, "project")
	example := filepath.Join(repo, "examples", "pulumi-"+string(lang))
	entries, err := os.ReadDir(example)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// The program and its project files; not what a run in the example
		// left (node_modules, .venv) nor the other scenarios.
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), "Pulumi.") || e.Name() == "Pulumi.yaml" {
			if err := copyFile(filepath.Join(example, e.Name()), filepath.Join(project, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), pulumitest.OperationTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = project
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	start := time.Now()
	run(env, pulumi, "plugin", "install", "resource", "k8sconnect", version, "--file", a.PulumiArchives[release.HostPlatform()])
	switch lang {
	case pulumitest.TypeScript:
		// The example's lockfile pins everything else; npm replaces its
		// reference to the in-tree SDK with the package.
		run(env, "npm", "install", "--no-audit", "--no-fund", a.NodePackage)
	case pulumitest.Python:
		// The example's requirements, with the wheel instead of ../../sdk/python.
		req := filepath.Join(project, "requirements.txt")
		b, err := os.ReadFile(req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\n../../sdk/python\n") {
			t.Fatalf("%s no longer names ../../sdk/python:\n%s", req, b)
		}
		writeFile(t, req, strings.Replace(string(b), "\n../../sdk/python\n", "\n"+a.PythonWheel+"\n", 1))
		venv := filepath.Join(project, ".venv")
		run(env, "python3", "-m", "venv", venv)
		constraints := filepath.Join(repo, "tools", "pulumi-automation", "python", "constraints.txt")
		run(append(env, "PIP_DISABLE_PIP_VERSION_CHECK=1"), filepath.Join(venv, "bin", "python"),
			"-m", "pip", "install", "--quiet", "-c", constraints, "-r", req)
		// The toolchain's Python host does not read Pulumi.yaml's virtualenv
		// option (see pulumitest): the virtualenv is activated instead.
		env = append(env, "VIRTUAL_ENV="+venv, "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+envValue(env, "PATH"))
	}
	t.Logf("plugin and SDK installed in %s", time.Since(start).Round(time.Second))

	namespace := "install-" + string(lang)
	run(env, pulumi, "stack", "init", "install", "--non-interactive")
	run(env, pulumi, "config", "set", "kubeconfigPath", q.kubeconfig)
	run(env, pulumi, "config", "set", "namespace", namespace)
	t.Cleanup(func() {
		if _, err := q.cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{}); err == nil {
			cmd := exec.Command(pulumi, "destroy", "--yes", "--non-interactive")
			cmd.Dir, cmd.Env = project, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("pulumi destroy after a failure: %v\n%s", err, out)
			}
		}
	})
	run(env, pulumi, "up", "--yes", "--skip-preview", "--non-interactive")
	q.expectGreeting(namespace, "hello")
	run(env, pulumi, "preview", "--expect-no-changes", "--non-interactive")
	run(env, pulumi, "destroy", "--yes", "--non-interactive")
	q.expectGone(namespace)
}

func (q quickstart) expectGreeting(namespace, want string) {
	q.t.Helper()
	cm, err := q.cs.CoreV1().ConfigMaps(namespace).Get(context.Background(), "greeting", metav1.GetOptions{})
	if err != nil {
		q.t.Fatalf("ConfigMap %s/greeting: %v", namespace, err)
	}
	if got := cm.Data["greeting"]; got != want {
		q.t.Fatalf("ConfigMap %s/greeting data.greeting = %q, want %q", namespace, got, want)
	}
}

func (q quickstart) expectGone(namespace string) {
	q.t.Helper()
	_, err := q.cs.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		q.t.Fatalf("namespace %s after destroy: %v (want not found)", namespace, err)
	}
}

// testLog sends release.Build's progress to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func mustRepo(t *testing.T) string {
	t.Helper()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
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
