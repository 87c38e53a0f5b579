package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// clusterCommand runs cluster-up, cluster-down or cluster-status on the dev
// cluster, whose state lives in localcluster.DevDir().
func clusterCommand(ctx context.Context, cmd string) error {
	dir, err := localcluster.DevDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	unlock, err := lock(dir + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	switch cmd {
	case "cluster-up":
		return clusterUp(ctx, dir, kubeconfig)
	case "cluster-down":
		return clusterDown(dir, kubeconfig)
	default:
		return clusterStatus(ctx, dir, kubeconfig)
	}
}

func clusterUp(ctx context.Context, dir, kubeconfig string) error {
	if c, err := localcluster.Load(kubeconfig); err == nil {
		err := c.Check(ctx)
		if err == nil {
			log.Printf("the dev cluster is already running at %s (state in %s)", c.Host, dir)
			fmt.Printf("KUBECONFIG=%s\n", c.KubeconfigPath)
			return nil
		}
		log.Printf("the dev cluster in %s does not work (%v); starting it again", dir, firstLine(err))
		if err := c.Stop(); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		log.Printf("no usable dev cluster in %s (%v); starting one", dir, err)
	}
	if err := toolchain.Ensure(ctx, toolchain.ClusterTools...); err != nil {
		return err
	}
	begin := time.Now()
	c, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Detach: true, Logf: log.Printf})
	if err != nil {
		return err
	}
	log.Printf("dev cluster up in %s at %s; stop it with `make cluster-down`", time.Since(begin).Round(10*time.Millisecond), c.Host)
	fmt.Printf("KUBECONFIG=%s\n", c.KubeconfigPath)
	return nil
}

func clusterDown(dir, kubeconfig string) error {
	c, err := localcluster.Load(kubeconfig)
	switch {
	case err == nil:
		if err := c.Stop(); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist):
		if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
			log.Printf("no dev cluster in %s", dir)
			return nil
		}
	default:
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	log.Printf("dev cluster stopped; removed %s", dir)
	return nil
}

func clusterStatus(ctx context.Context, dir, kubeconfig string) error {
	c, err := localcluster.Load(kubeconfig)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Printf("dev cluster: not running (no state in %s); start it with `make cluster-up`\n", dir)
		return exitCode(1)
	}
	if err != nil {
		return err
	}
	fmt.Printf("dev cluster: state in %s\n", dir)
	pids := c.PIDs()
	for _, name := range toolchain.ClusterTools {
		if pid, ok := pids[name]; ok {
			fmt.Printf("  %-24s pid %d\n", name, pid)
		} else {
			fmt.Printf("  %-24s not running\n", name)
		}
	}
	if err := c.Check(ctx); err != nil {
		fmt.Printf("dev cluster: not working: %v\n", err)
		fmt.Println("restart it with `make cluster-up`")
		return exitCode(1)
	}
	fmt.Printf("dev cluster: running at %s\n", c.Host)
	fmt.Printf("KUBECONFIG=%s\n", c.KubeconfigPath)
	return nil
}

func firstLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// lock serializes the cluster commands on one machine.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
