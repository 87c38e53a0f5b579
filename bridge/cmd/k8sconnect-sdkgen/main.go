// Command k8sconnect-sdkgen regenerates the Pulumi schema (schema/) and the
// Node, Python and Go SDKs (sdk/) from the framework provider, in-process.
//
//	cd bridge && go run ./cmd/k8sconnect-sdkgen            # into this repository (make generate)
//	cd bridge && go run ./cmd/k8sconnect-sdkgen -root DIR  # write the tree elsewhere
//
// The SDKs carry the version they ask the engine for; -version changes it for
// a release (the committed SDKs use bridge.Version).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/bridge/sdkgen"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

func main() {
	root := flag.String("root", "", "repository root to write schema/ and sdk/ under (default: this repository)")
	flag.StringVar(&bridge.Version, "version", bridge.Version, "version of the generated SDKs (semver)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-sdkgen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if root == "" {
		var err error
		if root, err = toolchain.RepoRoot(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(root); err != nil {
		return err
	}
	files, err := sdkgen.Files(context.Background())
	if err != nil {
		return err
	}
	return sdkgen.Write(root, files)
}
