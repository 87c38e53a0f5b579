package pulumitest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/release"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// PrepareTimeout bounds one preparation step (a build, npm ci, pip install).
var PrepareTimeout = 20 * time.Minute

var (
	commonOnce, goOnce, tsOnce, pyOnce, javaOnce once
	pulumiDirOnce, versionOnce                   once
)

// workDir is <repo>/.work/pulumi: built binaries, stamps and locks.
func workDir(repo string) string { return filepath.Join(repo, ".work", "pulumi") }

// common is what every stack uses.
type common struct {
	pulumiDir string // the pulumi CLI's directory, with its language hosts
	archive   string // the plugin's release archive
	version   string // the plugin version the SDKs ask for
	plugins   string // a PULUMI_HOME's plugin directory with that archive installed
}

// prepareCommon builds pulumi-resource-k8sconnect from this checkout and its
// release archive, installs the archive in a PULUMI_HOME of this checkout
// (.work/pulumi/home) that stacks link their plugins/ to, and makes sure the
// pulumi CLI and its language hosts are built.
func prepareCommon(t testing.TB, repo string) common {
	t.Helper()
	pulumiDir := cliDir(t)
	version := versionOnce.do(t, func() (string, error) { return sdkPluginVersion(repo) })
	archive := filepath.Join(workDir(repo), release.PulumiPluginArchiveName(version, runtime.GOOS, runtime.GOARCH))
	home := filepath.Join(workDir(repo), "home")
	commonOnce.do(t, func() (string, error) {
		return "", withLock(repo, "plugin", func() error {
			plugin := filepath.Join(workDir(repo), "bin", release.PulumiPlugin)
			if err := goBuild(filepath.Join(repo, "bridge"), plugin, "./cmd/"+release.PulumiPlugin); err != nil {
				return err
			}
			// go build rewrites the binary even when it is up to date: the
			// archive is made again only when its content changed.
			sum, err := release.FileSHA256(plugin)
			if err != nil {
				return err
			}
			inputs := version + " " + pulumiDir + " " + sum
			return ifChanged(repo, "plugin", inputs, func() error {
				if err := release.WritePulumiPluginArchive(archive, plugin, repo); err != nil {
					return err
				}
				if err := os.RemoveAll(home); err != nil {
					return err
				}
				env := []string{"PULUMI_HOME=" + home, "PULUMI_SKIP_UPDATE_CHECK=true"}
				return run(repo, env, append([]string{filepath.Join(pulumiDir, "pulumi")}, installPluginArgs(version, archive)...)...)
			})
		})
	})
	return common{pulumiDir: pulumiDir, archive: archive, version: version, plugins: filepath.Join(home, "plugins")}
}

// cliDir makes sure the pulumi CLI and its language hosts are built and
// returns their directory.
func cliDir(t testing.TB) string {
	t.Helper()
	return pulumiDirOnce.do(t, func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), PrepareTimeout)
		defer cancel()
		if err := toolchain.Ensure(ctx, toolchain.PulumiTools...); err != nil {
			return "", err
		}
		p, err := toolchain.Path("pulumi")
		if err != nil {
			return "", err
		}
		return filepath.Dir(p), nil
	})
}

// installPluginArgs are the arguments of the pulumi command that installs the
// plugin from its archive, as a user installs a release's download.
func installPluginArgs(version, archive string) []string {
	return []string{"plugin", "install", "resource", "k8sconnect", version, "--file", archive}
}

// sdkPluginVersion is the plugin version the SDKs ask the engine for: the
// version in the SDKs' plugin metadata (every SDK has the same, generated
// together), so a plugin of another version would not be found.
func sdkPluginVersion(repo string) (string, error) {
	path := filepath.Join(repo, "sdk", "python", "pulumi_k8sconnect", "pulumi-plugin.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.Name != "k8sconnect" || meta.Version == "" {
		return "", fmt.Errorf("%s: no k8sconnect plugin version (%v)", path, err)
	}
	return meta.Version, nil
}

// prepareGo builds the Go Automation API driver; it returns its path.
func prepareGo(t testing.TB, repo string) string {
	t.Helper()
	return goOnce.do(t, func() (string, error) {
		bin := filepath.Join(workDir(repo), "bin", "pulumi-automation-go")
		return bin, withLock(repo, "go", func() error {
			return goBuild(filepath.Join(repo, "tools", "pulumi-automation", "go"), bin, ".")
		})
	})
}

// prepareTypeScript builds the Node SDK into sdk/nodejs/bin (tsc, plus the
// package.json and README.md that make bin/ the package), then installs and
// compiles examples/pulumi-typescript, whose package.json takes the SDK from
// sdk/nodejs/bin.
func prepareTypeScript(t testing.TB, repo string) {
	t.Helper()
	tsOnce.do(t, func() (string, error) {
		sdk := filepath.Join(repo, "sdk", "nodejs")
		example := filepath.Join(repo, "examples", "pulumi-typescript")
		return "", withLock(repo, "typescript", func() error {
			sdkStamp, err := stamp(sdk, []string{"node_modules", "bin"})
			if err != nil {
				return err
			}
			exampleStamp, err := stamp(example, []string{"node_modules", "bin"})
			if err != nil {
				return err
			}
			return ifChanged(repo, "typescript", sdkStamp+exampleStamp, func() error {
				steps := []struct {
					dir  string
					args []string
				}{
					{sdk, []string{"npm", "ci", "--no-audit", "--no-fund"}},
					{sdk, []string{"node_modules/.bin/tsc"}},
					{sdk, []string{"cp", "package.json", "README.md", "bin/"}},
					{example, []string{"npm", "ci", "--no-audit", "--no-fund"}},
					{example, []string{"node_modules/.bin/tsc"}},
				}
				if err := os.RemoveAll(filepath.Join(sdk, "bin")); err != nil {
					return err
				}
				for _, st := range steps {
					if err := run(st.dir, nil, st.args...); err != nil {
						return err
					}
				}
				return nil
			})
		})
	})
}

// preparePython makes the virtualenv examples/pulumi-python/.venv (the one its
// Pulumi.yaml names) with the example's requirements, every version pinned by
// tools/pulumi-automation/python/constraints.txt; it returns its directory.
func preparePython(t testing.TB, repo string) string {
	t.Helper()
	return pyOnce.do(t, func() (string, error) {
		example := filepath.Join(repo, "examples", "pulumi-python")
		venv := filepath.Join(example, ".venv")
		python := filepath.Join(venv, "bin", "python")
		constraints := filepath.Join(repo, "tools", "pulumi-automation", "python", "constraints.txt")
		return venv, withLock(repo, "python", func() error {
			inputs := ""
			for _, dir := range []string{filepath.Join(repo, "sdk", "python"), example, filepath.Dir(constraints)} {
				// scenarios/ are programs run from source: the virtualenv
				// does not depend on them.
				s, err := stamp(dir, []string{".venv", "build", "dist", "__pycache__", "scenarios"})
				if err != nil {
					return err
				}
				inputs += s
			}
			return ifChanged(repo, "python", inputs, func() error {
				if err := os.RemoveAll(venv); err != nil {
					return err
				}
				if err := run(example, nil, "python3", "-m", "venv", venv); err != nil {
					return err
				}
				// PIP_CONSTRAINT also pins setuptools in the SDK's isolated build.
				env := []string{"PIP_CONSTRAINT=" + constraints, "PIP_DISABLE_PIP_VERSION_CHECK=1"}
				return run(example, env, python, "-m", "pip", "install", "--quiet", "-c", constraints, "-r", "requirements.txt")
			})
		})
	})
}

// fastJVM makes Maven's short-lived JVMs cheaper: every Java operation starts
// mvn twice (the language host lists the program's plugins, then runs it), and
// the C1 compiler alone with the serial collector take about 40% less CPU for
// runs of a few seconds.
const fastJVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

// prepareJava builds the Java language host (beside the CLI) and installs
// sdk/java into the Maven repository of the tool cache, where the example's
// pom.xml finds the SDK by version; it returns what a Java stack adds to its
// environment: MAVEN_OPTS naming that repository, for every mvn the language
// host runs.
func prepareJava(t testing.TB, repo string) []string {
	t.Helper()
	repository := javaOnce.do(t, func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), PrepareTimeout)
		defer cancel()
		if err := toolchain.Ensure(ctx, "pulumi-language-java"); err != nil {
			return "", err
		}
		cache, err := toolchain.CacheDir()
		if err != nil {
			return "", err
		}
		repository := filepath.Join(cache, "maven-repository")
		sdk := filepath.Join(repo, "sdk", "java")
		return repository, withLock(repo, "java", func() error {
			// The SDK stays locked until this process exits.
			_, err := installJavaSDK(sdk, repository, func() error {
				return run(sdk, []string{mavenOpts(repository)}, "mvn", "-B", "--no-transfer-progress", "-q", "install")
			})
			return err
		})
	})
	return []string{mavenOpts(repository)}
}

// mavenOpts is the MAVEN_OPTS setting of every mvn of the Java tests: the
// developer's own, fastJVM, and the shared repository.
func mavenOpts(repository string) string {
	return "MAVEN_OPTS=" + strings.TrimSpace(os.Getenv("MAVEN_OPTS")+" "+fastJVM+" -Dmaven.repo.local="+repository)
}

// installJavaSDK makes sure the SDK that repository holds at this version is
// the one built from sdk (install puts it there), and keeps it so until
// release is called or the process exits.
//
// The repository is shared by every checkout on the machine, so that a warm
// run downloads nothing from Maven Central, but two checkouts may hold
// different SDKs of the same version. So the SDK is installed (`mvn install`)
// under an exclusive lock, with a stamp of its sources beside it, and a
// process that uses it holds the lock shared until it exits: a checkout with
// the same SDK shares it, one with another SDK waits.
func installJavaSDK(sdk, repository string, install func() error) (release func(), err error) {
	want, err := stamp(sdk, []string{"target"})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(repository, 0o755); err != nil {
		return nil, err
	}
	lock := filepath.Join(repository, ".k8sconnect-sdk.lock")
	stampFile := filepath.Join(repository, ".k8sconnect-sdk.stamp")
	// A bare descriptor, not an *os.File, whose finalizer would close it (and
	// drop the lock) once garbage: it stays open, and the lock held, until
	// the process exits.
	fd, err := syscall.Open(lock, syscall.O_CREAT|syscall.O_RDWR|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lock, err)
	}
	release = func() { _ = syscall.Close(fd) }
	fail := func(err error) (func(), error) {
		release()
		return nil, err
	}
	waiting := false
	for {
		// Blocks only while someone installs.
		if err := syscall.Flock(fd, syscall.LOCK_SH); err != nil {
			return fail(err)
		}
		if got, _ := os.ReadFile(stampFile); string(got) == want {
			return release, nil
		}
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			// Others use the installed SDK, or install one: look again
			// soon, without holding the lock, so that an install of the
			// same SDK by someone else also ends the wait.
			_ = syscall.Flock(fd, syscall.LOCK_UN)
			if !waiting {
				log.Printf("pulumitest: waiting for the tests of another checkout that use another build of the Java SDK (%s)", lock)
				waiting = true
			}
			time.Sleep(time.Second)
			continue
		}
		if err != nil {
			return fail(err)
		}
		if got, _ := os.ReadFile(stampFile); string(got) != want {
			_ = os.Remove(stampFile)
			if err := install(); err != nil {
				return fail(err)
			}
			if err := os.WriteFile(stampFile, []byte(want), 0o644); err != nil {
				return fail(err)
			}
		}
		// The loop takes the lock shared again (a conversion, not atomic,
		// hence the second look at the stamp).
	}
}

func goBuild(dir, out, pkg string) error {
	env := []string{}
	if os.Getenv("GONOSUMDB") == "" {
		env = append(env, "GONOSUMDB=github.com/pulumi")
	}
	return run(dir, env, "go", "build", "-o", out, pkg)
}

// run runs a preparation step with the process's environment plus env.
func run(dir string, env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), PrepareTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// stamp hashes the names and contents of the files under dir, skipping the
// named directories and files (build products).
func stamp(dir string, skip []string) (string, error) {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, s := range skip {
			if d.Name() == s || strings.HasSuffix(d.Name(), ".egg-info") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(dir, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ifChanged runs f unless the stamp recorded under name equals inputs, and
// records inputs once f succeeds.
func ifChanged(repo, name, inputs string, f func() error) error {
	path := filepath.Join(workDir(repo), name+".stamp")
	if old, err := os.ReadFile(path); err == nil && string(old) == inputs {
		return nil
	}
	_ = os.Remove(path)
	if err := f(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(inputs), 0o644)
}

// withLock runs f holding an exclusive lock shared by every test process of
// this checkout, so that two packages' tests never build the same thing at once.
func withLock(repo, name string, f func() error) error {
	dir := workDir(repo)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer func() { _ = syscall.Flock(int(lf.Fd()), syscall.LOCK_UN) }()
	return f()
}
