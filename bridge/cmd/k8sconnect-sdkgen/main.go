// Command k8sconnect-sdkgen regenerates the Pulumi schema (schema/) and the
// Node, Python and Go SDKs (sdk/) from the framework provider, in-process.
//
//	go run ./bridge/cmd/k8sconnect-sdkgen            # from the repository root
//	go run ./bridge/cmd/k8sconnect-sdkgen -root DIR  # write the tree elsewhere
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
)

func main() {
	root := flag.String("root", ".", "repository root to write schema/ and sdk/ under")
	flag.StringVar(&bridge.Version, "version", bridge.Version, "version of the generated SDKs (semver)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-sdkgen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if _, err := os.Stat(root); err != nil {
		return err
	}
	files, err := sdkgen.Files(context.Background())
	if err != nil {
		return err
	}
	return sdkgen.Write(root, files)
}
