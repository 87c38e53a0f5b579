package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// packNode compiles a copy of sdk/nodejs (npm ci from its lockfile, then tsc
// into bin/) and packs bin/, with package.json, the README and the LICENSE
// beside the JavaScript, into outDir: what `npm publish` would upload. It
// returns the package's path.
func packNode(ctx context.Context, repo, work, outDir string) (string, error) {
	dir := filepath.Join(work, "nodejs")
	skip := func(first string) bool { return first == "node_modules" || first == "bin" }
	if err := copyTree(filepath.Join(repo, "sdk", "nodejs"), dir, skip); err != nil {
		return "", err
	}
	if err := run(ctx, dir, nil, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
		return "", err
	}
	if err := run(ctx, dir, nil, filepath.Join("node_modules", ".bin", "tsc")); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin")
	for _, f := range []string{filepath.Join(dir, "package.json"), filepath.Join(dir, "README.md"), filepath.Join(repo, "LICENSE")} {
		if err := copyFile(f, filepath.Join(bin, filepath.Base(f))); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(outDir)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "npm", "pack", "--json", "--pack-destination", abs)
	cmd.Dir = bin
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack: %w\n%s", err, stderr(err))
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack printed %q (%v)", out, err)
	}
	return filepath.Join(abs, packed[0].Filename), nil
}

// packPython builds a wheel and an sdist of a copy of sdk/python, with the
// LICENSE beside pyproject.toml (setuptools puts it into both), into outDir;
// it returns their paths. The build runs without isolation in a virtualenv of
// the exact versions in tools/release-python/requirements.txt.
func packPython(ctx context.Context, repo, work, outDir string) (wheel, sdist string, err error) {
	python, err := pythonBuildEnv(ctx, repo)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(work, "python")
	skip := func(first string) bool {
		return first == "build" || first == "dist" || first == "__pycache__" || strings.HasSuffix(first, ".egg-info")
	}
	if err := copyTree(filepath.Join(repo, "sdk", "python"), dir, skip); err != nil {
		return "", "", err
	}
	if err := copyFile(filepath.Join(repo, "LICENSE"), filepath.Join(dir, "LICENSE")); err != nil {
		return "", "", err
	}
	dist := filepath.Join(work, "python-dist")
	if err := run(ctx, dir, nil, python, "-m", "build", "--no-isolation", "--wheel", "--sdist", "--outdir", dist, "."); err != nil {
		return "", "", err
	}
	for _, pattern := range []struct {
		glob string
		into *string
	}{{"*.whl", &wheel}, {"*.tar.gz", &sdist}} {
		found, _ := filepath.Glob(filepath.Join(dist, pattern.glob))
		if len(found) != 1 {
			return "", "", fmt.Errorf("python -m build made %v, want one %s", found, pattern.glob)
		}
		*pattern.into = filepath.Join(outDir, filepath.Base(found[0]))
		if err := copyFile(found[0], *pattern.into); err != nil {
			return "", "", err
		}
	}
	return wheel, sdist, nil
}

// pythonBuildEnv makes (once per content of the requirements) the virtualenv
// .work/release/python-build-<hash> of the repository with the pinned build
// tools, and returns its python. A virtualenv is made under another name and
// renamed into place, so a concurrent or interrupted build never leaves a
// half-made one where the next build would use it.
func pythonBuildEnv(ctx context.Context, repo string) (string, error) {
	requirements := filepath.Join(repo, "tools", "release-python", "requirements.txt")
	b, err := os.ReadFile(requirements)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	parent := filepath.Join(repo, ".work", "release")
	venv := filepath.Join(parent, "python-build-"+hex.EncodeToString(sum[:6]))
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(python); err == nil {
		return python, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, ".python-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := run(ctx, parent, nil, "python3", "-m", "venv", tmp); err != nil {
		return "", err
	}
	if err := run(ctx, parent, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"},
		filepath.Join(tmp, "bin", "python"), "-m", "pip", "install", "--quiet", "-r", requirements); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, venv); err != nil {
		if _, statErr := os.Stat(python); statErr != nil {
			return "", err
		}
	}
	return python, nil
}

// packJava builds the jar of a copy of sdk/java with Maven (its local
// repository mavenRepository, "" for Maven's default) into outDir.
func packJava(ctx context.Context, repo, work, outDir, version, mavenRepository string) (string, error) {
	dir := filepath.Join(work, "java")
	if err := copyTree(filepath.Join(repo, "sdk", "java"), dir, func(first string) bool { return first == "target" }); err != nil {
		return "", err
	}
	var env []string
	if mavenRepository != "" {
		env = append(env, "MAVEN_OPTS="+strings.TrimSpace(os.Getenv("MAVEN_OPTS")+" -Dmaven.repo.local="+mavenRepository))
	}
	if err := run(ctx, dir, env, "mvn", "-B", "-q", "--no-transfer-progress", "package"); err != nil {
		return "", err
	}
	jar := "k8sconnect-" + version + ".jar"
	dst := filepath.Join(outDir, jar)
	return dst, copyFile(filepath.Join(dir, "target", jar), dst)
}

// stderr is what a failed command of exec.Cmd.Output wrote to its stderr.
func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
