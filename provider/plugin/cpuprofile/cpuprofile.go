// Package cpuprofile lets `make bench PROFILE=1` see where the provider
// plugins spend their CPU: with K8SCONNECT_CPU_PROFILE naming a directory,
// Start profiles the process into <dir>/<binary>-<pid>.pprof until the stop
// function it returns runs. Both plugin mains defer it, so the profile is
// written when their Serve returns; it does return on the engines' ordinary
// shutdown (Terraform and OpenTofu ask go-plugin's controller to shut down,
// Pulumi sends SIGINT, which its provider server turns into a graceful stop),
// and TestProfileAfterTerraform checks that a real run leaves a profile.
// Without the variable Start does nothing.
package cpuprofile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
)

// Env names the directory that receives the profiles.
const Env = "K8SCONNECT_CPU_PROFILE"

// Start begins profiling when Env is set and returns the function that
// stops it and closes the file (safe to call more than once). A profile that
// cannot be started is reported on stderr, which the engines log, and never
// stops the plugin: profiling is a diagnostic, not a reason to fail.
func Start() (stop func()) {
	dir := os.Getenv(Env)
	if dir == "" {
		return func() {}
	}
	path := filepath.Join(dir, filepath.Base(os.Args[0])+"-"+strconv.Itoa(os.Getpid())+".pprof")
	f, err := start(dir, path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "k8sconnect: no CPU profile (%s): %v\n", Env, err)
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "k8sconnect: writing the CPU profile %s: %v\n", path, err)
			}
		})
	}
}

func start(dir, path string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return f, nil
}
