// Command k8sconnect-dev builds the pinned dev toolchain and runs the embedded
// local cluster for development:
//
//	k8sconnect-dev tools [-except name]... [name...]
//	                                 build missing tools (default: all), print each path
//	k8sconnect-dev cluster-up        start the dev cluster detached (idempotent);
//	                                 the last line of stdout is KUBECONFIG=<absolute path>
//	k8sconnect-dev cluster-status    print the dev cluster's state; exit 1 if it is not running
//	k8sconnect-dev cluster-down      stop the dev cluster and delete its state
//	k8sconnect-dev docs [-check]     write the registry docs in docs/ (-check: fail if stale)
//
// The Makefile runs it with `go run ./internal/cmd/k8sconnect-dev ...`.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

const usage = `usage: k8sconnect-dev <command>

commands:
  tools [-except name]... [name...]
                    build the pinned tools that are missing (default: all), less those
                    -except names, and print their paths
  cluster-up        start the dev cluster in the background (does nothing if it is running);
                    the last line printed is KUBECONFIG=<path>
  cluster-status    show whether the dev cluster is running (exit status 1 if not)
  cluster-down      stop the dev cluster and delete its state
  docs [-check]     write the Terraform/OpenTofu registry docs in docs/ with tfplugindocs;
                    -check fails, naming the files, when docs/ is stale
`

func main() {
	log.SetFlags(0)
	log.SetPrefix("k8sconnect-dev: ")
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "tools":
		err = tools(ctx, args)
	case "cluster-up", "cluster-down", "cluster-status":
		if len(args) != 0 {
			err = fmt.Errorf("%s takes no arguments", cmd)
			break
		}
		err = clusterCommand(ctx, cmd)
	case "docs":
		err = docs(ctx, args)
	case "help", "-h", "-help", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		stop()
		if code, ok := err.(exitCode); ok {
			os.Exit(int(code))
		}
		log.Fatal(err)
	}
}

// exitCode ends the command with a status and no message.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func tools(ctx context.Context, args []string) error {
	names, err := toolNames(args)
	if err != nil || len(names) == 0 { // none left: Ensure() would build them all
		return err
	}
	if err := toolchain.Ensure(ctx, names...); err != nil {
		return err
	}
	for _, n := range names {
		p, err := toolchain.Path(n)
		if err != nil {
			return err
		}
		fmt.Printf("%s=%s\n", n, p)
	}
	return nil
}

// toolNames reads the arguments of the tools command: the named tools, or
// all of them, less those -except names (make test builds what each of its
// steps runs just before the step).
func toolNames(args []string) ([]string, error) {
	var except []string
	for len(args) > 0 && args[0] == "-except" {
		if len(args) < 2 {
			return nil, fmt.Errorf("tools -except needs the name of a tool")
		}
		except = append(except, args[1])
		args = args[2:]
	}
	names := args
	if len(names) == 0 {
		names = toolchain.Names()
	}
	for _, n := range except {
		if !slices.Contains(toolchain.Names(), n) {
			return nil, fmt.Errorf("tools -except %s: no such tool (known: %s)", n, strings.Join(toolchain.Names(), ", "))
		}
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(except, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
