package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Platform is an operating system and architecture a release has binaries for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// exe is the name of an executable on p.
func (p Platform) exe(name string) string {
	if p.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// Platforms are the platforms of a release: the OSes and architectures that
// Terraform, OpenTofu and Pulumi publish their own binaries for and that users
// run them on.
var Platforms = []Platform{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// HostPlatform is the platform this program runs on.
func HostPlatform() Platform { return Platform{runtime.GOOS, runtime.GOARCH} }

// ParsePlatforms reads a platform list: "all" (Platforms), "host"
// (HostPlatform), or os/arch pairs separated by commas.
func ParsePlatforms(s string) ([]Platform, error) {
	switch s {
	case "all":
		return Platforms, nil
	case "host":
		return []Platform{HostPlatform()}, nil
	}
	var out []Platform
	for _, item := range strings.Split(s, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(item), "/")
		if !ok || goos == "" || goarch == "" {
			return nil, fmt.Errorf("platform %q: want os/arch, e.g. linux/amd64", item)
		}
		out = append(out, Platform{goos, goarch})
	}
	return out, nil
}

// SDK is a Pulumi SDK that a release packages. The Go SDK is not packaged:
// Go programs take it from source at the release's tag (see docs/releasing.md).
type SDK string

// The SDKs a release packages.
const (
	NodeJS SDK = "nodejs" // npm pack of sdk/nodejs, compiled
	Python SDK = "python" // a wheel and an sdist of sdk/python
	Java   SDK = "java"   // the jar of sdk/java
)

// SDKs lists every SDK a release packages.
var SDKs = []SDK{NodeJS, Python, Java}

// Options say what Build makes.
type Options struct {
	Repo      string     // the repository root
	Version   string     // semver without a leading v; the SDKs in Repo must carry it
	Platforms []Platform // the platforms of the provider and plugin binaries
	SDKs      []SDK      // the SDK packages to make
	Out       string     // the directory to write terraform/, pulumi/ and sdk/ into
	// MavenRepository is Maven's local repository for the Java SDK's build
	// (-Dmaven.repo.local), so that a build reuses what the tests downloaded.
	MavenRepository string
	// SignKey is the GPG key that signs the Terraform SHA256SUMS (the
	// Terraform Registry requires the signature, <sums>.sig). Empty leaves
	// the release unsigned.
	SignKey string
	// HostBuild builds the binaries as the tests build theirs (cgo as the
	// host has it, the builder's paths kept) instead of with a release's
	// CGO_ENABLED=0 and -trimpath. Either setting changes the key of every
	// package in Go's build cache, so a release build from a cold cache
	// compiles both modules and all their dependencies once more, minutes of
	// CPU; with HostBuild it reuses what the tests compiled. The binaries
	// behave the same. For tests of the packaging only.
	HostBuild bool
	Log       io.Writer // progress; nil discards it
}

// Artifacts are the files Build wrote, by absolute path.
type Artifacts struct {
	TerraformZips     map[Platform]string
	TerraformSums     string
	TerraformSig      string // "" when unsigned
	TerraformManifest string
	PulumiArchives    map[Platform]string
	PulumiSums        string
	NodePackage       string
	PythonWheel       string
	PythonSdist       string
	JavaJar           string
}

// Build writes a release's files into o.Out:
//
//	terraform/terraform-provider-k8sconnect_<v>_<os>_<arch>.zip  (per platform)
//	terraform/terraform-provider-k8sconnect_<v>_SHA256SUMS        (zips and manifest)
//	terraform/terraform-provider-k8sconnect_<v>_manifest.json
//	pulumi/pulumi-resource-k8sconnect-v<v>-<os>-<arch>.tar.gz     (per platform)
//	pulumi/pulumi-resource-k8sconnect-v<v>-SHA256SUMS
//	sdk/k8sconnect-k8sconnect-<v>.tgz, pulumi_k8sconnect-<pep440>-py3-none-any.whl,
//	sdk/pulumi_k8sconnect-<pep440>.tar.gz, k8sconnect-<v>.jar       (as o.SDKs say)
//
// which is the layout the Terraform Registry, GitHub releases (the Pulumi
// plugin's download URL), npm, PyPI and Maven take.
func Build(ctx context.Context, o Options) (*Artifacts, error) {
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	if err := CheckVersion(o.Version); err != nil {
		return nil, err
	}
	if err := checkSDKVersions(o.Repo, o.Version); err != nil {
		return nil, err
	}
	a := &Artifacts{TerraformZips: map[Platform]string{}, PulumiArchives: map[Platform]string{}}
	tfDir, pulumiDir, sdkDir := filepath.Join(o.Out, "terraform"), filepath.Join(o.Out, "pulumi"), filepath.Join(o.Out, "sdk")
	for _, d := range []string{tfDir, pulumiDir, sdkDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	work, err := os.MkdirTemp("", "k8sconnect-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	var tfFiles, pulumiFiles []string
	for _, p := range o.Platforms {
		start := time.Now()
		provider := filepath.Join(work, p.OS+"_"+p.Arch, p.exe(TerraformProvider+"_v"+o.Version))
		if err := goBuild(ctx, o.Repo, p, o.HostBuild, o.Version, provider, "./provider/cmd/"+TerraformProvider); err != nil {
			return nil, err
		}
		zipPath := filepath.Join(tfDir, TerraformZipName(o.Version, p))
		if err := WriteTerraformZip(zipPath, provider); err != nil {
			return nil, err
		}
		a.TerraformZips[p] = zipPath
		tfFiles = append(tfFiles, zipPath)

		plugin := filepath.Join(work, p.OS+"_"+p.Arch, p.exe(PulumiPlugin))
		if err := goBuild(ctx, filepath.Join(o.Repo, "bridge"), p, o.HostBuild, o.Version, plugin, "./cmd/"+PulumiPlugin); err != nil {
			return nil, err
		}
		archive := filepath.Join(pulumiDir, PulumiPluginArchiveName(o.Version, p.OS, p.Arch))
		if err := WritePulumiPluginArchive(archive, plugin, o.Repo); err != nil {
			return nil, err
		}
		a.PulumiArchives[p] = archive
		pulumiFiles = append(pulumiFiles, archive)
		logf("%s: provider and plugin built and archived in %s", p, time.Since(start).Round(time.Second))
	}

	a.TerraformManifest = filepath.Join(tfDir, TerraformManifestName(o.Version))
	if err := copyFile(filepath.Join(o.Repo, "terraform-registry-manifest.json"), a.TerraformManifest); err != nil {
		return nil, err
	}
	// The registry checks the manifest against the sums too.
	a.TerraformSums = filepath.Join(tfDir, TerraformSumsName(o.Version))
	if err := WriteSHA256Sums(a.TerraformSums, append(tfFiles, a.TerraformManifest)); err != nil {
		return nil, err
	}
	if o.SignKey != "" {
		a.TerraformSig = a.TerraformSums + ".sig"
		if err := run(ctx, o.Repo, nil, "gpg", "--batch", "--yes", "--local-user", o.SignKey,
			"--output", a.TerraformSig, "--detach-sign", a.TerraformSums); err != nil {
			return nil, fmt.Errorf("signing %s: %w", a.TerraformSums, err)
		}
	} else {
		logf("unsigned: %s has no .sig (set a GPG key to sign it; the Terraform Registry requires one)", filepath.Base(a.TerraformSums))
	}
	a.PulumiSums = filepath.Join(pulumiDir, PulumiSumsName(o.Version))
	if err := WriteSHA256Sums(a.PulumiSums, pulumiFiles); err != nil {
		return nil, err
	}

	for _, sdk := range o.SDKs {
		start := time.Now()
		var err error
		switch sdk {
		case NodeJS:
			a.NodePackage, err = packNode(ctx, o.Repo, work, sdkDir)
		case Python:
			a.PythonWheel, a.PythonSdist, err = packPython(ctx, o.Repo, work, sdkDir)
		case Java:
			a.JavaJar, err = packJava(ctx, o.Repo, work, sdkDir, o.Version, o.MavenRepository)
		default:
			err = fmt.Errorf("unknown SDK %q (want one of %v)", sdk, SDKs)
		}
		if err != nil {
			return nil, fmt.Errorf("%s SDK: %w", sdk, err)
		}
		logf("%s SDK packaged in %s", sdk, time.Since(start).Round(time.Second))
	}
	return a, nil
}

// CheckVersion accepts a release version: semver (what npm, Maven, Terraform
// and, after a v, Go take) without a leading v, in full (no 1.2 shorthand)
// and without build metadata (+...), which npm and Go ignore when they compare
// versions and the Python codegen would make a local version PyPI refuses.
func CheckVersion(v string) error {
	if strings.HasPrefix(v, "v") || semver.Canonical("v"+v) != "v"+v {
		return fmt.Errorf("version %q: want semver without a leading v or +build, e.g. 1.2.3 or 1.2.3-rc.1", v)
	}
	return nil
}

// checkSDKVersions refuses a release whose committed SDKs carry another
// version. The SDKs cannot be regenerated here for the release: the Go SDK is
// taken from the tagged source, so the tree itself must carry the version.
func checkSDKVersions(repo, version string) error {
	files := []string{
		"sdk/nodejs/package.json",
		"sdk/python/pulumi_k8sconnect/pulumi-plugin.json",
		"sdk/go/pulumi-plugin.json",
		"sdk/go/k8sconnect/pulumi-plugin.json",
		"sdk/java/src/main/resources/com/k8sconnect/k8sconnect/plugin.json",
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			return err
		}
		var meta struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if meta.Version != version {
			return fmt.Errorf("%s carries version %q, not %q: write %s to VERSION, run make generate and commit first",
				f, meta.Version, version, version)
		}
	}
	return nil
}

// goBuild cross-compiles pkg of the module in dir for p. Without cgo, the
// binaries need nothing from the system they run on; -s -w drop the symbol
// table and DWARF (a third of the size), -trimpath the builder's paths.
// hostBuild keeps cgo and the paths (Options.HostBuild).
func goBuild(ctx context.Context, dir string, p Platform, hostBuild bool, version, out, pkg string) error {
	env := []string{"GOOS=" + p.OS, "GOARCH=" + p.Arch}
	args := []string{"go", "build"}
	if !hostBuild {
		env = append(env, "CGO_ENABLED=0")
		args = append(args, "-trimpath")
	}
	args = append(args, "-ldflags", "-s -w -X main.version="+version, "-o", out, pkg)
	return run(ctx, dir, env, args...)
}

// run runs a command in dir with env added to this process's environment;
// its output goes into the error.
func run(ctx context.Context, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return nil
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// copyTree copies the regular files under src to dst, leaving out the
// entries whose first path element skip names (build products, installed
// dependencies).
func copyTree(src, dst string, skip func(first string) bool) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel != "." && skip(strings.Split(filepath.ToSlash(rel), "/")[0]) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		return copyFile(path, target)
	})
}
