// Command k8sconnect-release writes the files of a release (see
// release.Build for the layout). `make release` runs it:
//
//	go run ./internal/cmd/k8sconnect-release -out dist                      # everything
//	go run ./internal/cmd/k8sconnect-release -platforms host -sdks nodejs   # a quick local build
//
// The committed SDKs must carry the version: write it to VERSION and run
// `make generate` first.
//
// Signing: the Terraform Registry wants SHA256SUMS signed with the GPG key
// registered for the namespace. With -sign-key (or K8SCONNECT_GPG_KEY) set to
// that key's ID, gpg --detach-sign writes <SHA256SUMS>.sig; without it the
// release is unsigned and says so.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/internal/release"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

func main() {
	version := flag.String("version", k8sconnect.Version, "release version, semver without a leading v (default: the VERSION file)")
	out := flag.String("out", "dist", "directory to write terraform/, pulumi/ and sdk/ into")
	platforms := flag.String("platforms", "all", "all, host, or os/arch pairs separated by commas")
	sdks := flag.String("sdks", "nodejs,python,java", "SDK packages to make, separated by commas (empty: none)")
	signKey := flag.String("sign-key", os.Getenv("K8SCONNECT_GPG_KEY"), "GPG key that signs the Terraform SHA256SUMS (empty: unsigned)")
	flag.Parse()
	if err := run(*version, *out, *platforms, *sdks, *signKey); err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-release:", err)
		os.Exit(1)
	}
}

func run(version, out, platforms, sdks, signKey string) error {
	start := time.Now()
	repo, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	ps, err := release.ParsePlatforms(platforms)
	if err != nil {
		return err
	}
	var sdkList []release.SDK
	for _, s := range strings.Split(sdks, ",") {
		if s = strings.TrimSpace(s); s != "" {
			sdkList = append(sdkList, release.SDK(s))
		}
	}
	cache, err := toolchain.CacheDir()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if _, err := release.Build(context.Background(), release.Options{
		Repo:      repo,
		Version:   version,
		Platforms: ps,
		SDKs:      sdkList,
		Out:       abs,
		// The Maven repository the Java tests fill (see pulumitest).
		MavenRepository: filepath.Join(cache, "maven-repository"),
		SignKey:         signKey,
		Log:             os.Stderr,
	}); err != nil {
		return err
	}
	err = filepath.WalkDir(abs, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(abs, path)
		fmt.Printf("%8.1f MB  %s\n", float64(info.Size())/1e6, filepath.Join(out, rel))
		return nil
	})
	fmt.Fprintf(os.Stderr, "release %s in %s\n", version, time.Since(start).Round(time.Second))
	return err
}
