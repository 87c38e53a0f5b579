// Command k8sconnect-bench times terraform apply / plan / destroy of N
// ConfigMaps through k8sconnect against kubectl's server-side apply, dry run and
// delete of the same manifests on the embedded cluster, and reports the
// provider's peak RSS and API requests per object.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
	"github.com/k8sconnect/k8sconnect/internal/testing/toolchain"
)

func main() {
	n := flag.Int("n", 200, "number of ConfigMaps")
	engine := flag.String("engine", "terraform", "terraform or tofu")
	flag.Parse()
	if err := run(*n, *engine); err != nil {
		fmt.Fprintln(os.Stderr, "k8sconnect-bench:", err)
		os.Exit(1)
	}
}

type result struct {
	name     string
	duration time.Duration
	peakKiB  int64
	requests int
}

func run(n int, engine string) error {
	ctx := context.Background()
	cluster, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()

	work, err := os.MkdirTemp("", "k8sconnect-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	root, err := toolchain.RepoRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "./provider/cmd/terraform-provider-k8sconnect")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the provider: %w", err)
	}
	enginePath, err := toolchain.Path(engine)
	if err != nil {
		return err
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return fmt.Errorf("kubectl is needed for the comparison: %w", err)
	}

	// Terraform configuration: N objects from one for_each.
	tfdir := filepath.Join(work, "tf")
	if err := os.MkdirAll(tfdir, 0o755); err != nil {
		return err
	}
	rc := filepath.Join(work, "cli.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/k8sconnect/k8sconnect" = %[1]q
    "registry.opentofu.org/k8sconnect/k8sconnect" = %[1]q
  }
  direct {}
}
`, bin)), 0o600); err != nil {
		return err
	}
	main := fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
}
resource "k8sconnect_object" "cm" {
  for_each  = toset([for i in range(%d) : format("tf-%%04d", i)])
  yaml_body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${each.key}\n  namespace: bench-tf\ndata:\n  key: value\n"
  cluster_connection = { kubeconfig = file(%q) }
}
resource "k8sconnect_object" "ns" {
  yaml_body          = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-tf\n"
  cluster_connection = { kubeconfig = file(%q) }
}
`, n, cluster.KubeconfigPath, cluster.KubeconfigPath)
	if err := os.WriteFile(filepath.Join(tfdir, "main.tf"), []byte(main), 0o600); err != nil {
		return err
	}
	reqlog := filepath.Join(work, "requests.log")
	tfEnv := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
		"K8SCONNECT_REQUEST_LOG="+reqlog)

	// kubectl: the same objects in one file.
	var manifests strings.Builder
	manifests.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: bench-kubectl\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&manifests, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kc-%04d\n  namespace: bench-kubectl\ndata:\n  key: value\n", i)
	}
	kfile := filepath.Join(work, "manifests.yaml")
	if err := os.WriteFile(kfile, []byte(manifests.String()), 0o600); err != nil {
		return err
	}
	kEnv := append(os.Environ(), "KUBECONFIG="+cluster.KubeconfigPath)

	var results []result
	step := func(name string, env []string, dir string, args ...string) error {
		_ = os.Truncate(reqlog, 0)
		r, err := timed(name, env, dir, args...)
		if err != nil {
			return err
		}
		r.requests = countLines(reqlog)
		results = append(results, r)
		return nil
	}
	if err := step(engine+" apply (create)", tfEnv, tfdir, enginePath, "apply", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	if err := step(engine+" plan (no changes)", tfEnv, tfdir, enginePath, "plan", "-input=false", "-detailed-exitcode"); err != nil {
		return err
	}
	if err := step(engine+" destroy", tfEnv, tfdir, enginePath, "destroy", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	for _, k := range []struct {
		name string
		args []string
	}{
		{"kubectl apply --server-side", []string{"apply", "--server-side", "-f", kfile}},
		{"kubectl apply --server-side --dry-run=server", []string{"apply", "--server-side", "--dry-run=server", "-f", kfile}},
		{"kubectl delete --wait", []string{"delete", "--wait", "-f", kfile}},
	} {
		if err := step(k.name, kEnv, work, append([]string{kubectl}, k.args...)...); err != nil {
			return err
		}
	}

	fmt.Printf("\nk8sconnect benchmark: %d ConfigMaps, %s, embedded cluster\n\n", n, engine)
	fmt.Printf("%-46s %10s %14s %12s\n", "step", "seconds", "provider peak", "API requests")
	for _, r := range results {
		peak, reqs := "", ""
		if r.peakKiB > 0 {
			peak = fmt.Sprintf("%d MiB", r.peakKiB/1024)
		}
		if r.requests > 0 {
			reqs = strconv.Itoa(r.requests)
		}
		fmt.Printf("%-46s %10.1f %14s %12s\n", r.name, r.duration.Seconds(), peak, reqs)
	}
	fmt.Printf("\nratios (k8sconnect / kubectl): apply %.2f, plan vs dry-run %.2f, destroy vs delete %.2f\n",
		ratio(results[0], results[3]), ratio(results[1], results[4]), ratio(results[2], results[5]))
	fmt.Printf("API requests per object: apply %.1f, plan %.1f, destroy %.1f\n",
		float64(results[0].requests)/float64(n+1), float64(results[1].requests)/float64(n+1), float64(results[2].requests)/float64(n+1))
	return nil
}

func ratio(a, b result) float64 { return a.duration.Seconds() / b.duration.Seconds() }

// timed runs a command and samples the peak RSS of the provider plugin it starts.
func timed(name string, env []string, dir string, args ...string) (result, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, _ := os.CreateTemp("", "bench-out-")
	defer os.Remove(out.Name())
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	var peak int64
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				if kib := providerPeakKiB(); kib > 0 {
					mu.Lock()
					if kib > peak {
						peak = kib
					}
					mu.Unlock()
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	d := time.Since(start)
	// plan -detailed-exitcode exits 2 when there are changes: that is a failure here.
	if err != nil {
		b, _ := os.ReadFile(out.Name())
		return result{}, fmt.Errorf("%s failed: %v\n%s", name, err, b)
	}
	mu.Lock()
	defer mu.Unlock()
	return result{name: name, duration: d, peakKiB: peak}, nil
}

// providerPeakKiB reads VmHWM (peak resident set) of running provider plugins.
func providerPeakKiB() int64 {
	entries, _ := os.ReadDir("/proc")
	var peak int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), "terraform-provi") {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "VmHWM:") {
				fields := strings.Fields(sc.Text())
				if v, err := strconv.ParseInt(fields[1], 10, 64); err == nil && v > peak {
					peak = v
				}
			}
		}
		f.Close()
	}
	return peak
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return 0
	}
	return strings.Count(string(b), "\n")
}
