//go:build !linux

package faultproxy

import (
	"errors"
	"os/exec"
	"testing"
)

// OwnGroup is a no-op here: KillTree needs Linux.
func OwnGroup(cmd *exec.Cmd) {}

// KillTree needs /proc: Linux only.
func KillTree(pid int) ([]Process, error) {
	return nil, errors.New("faultproxy: KillTree is implemented on Linux only")
}

// WaitDead needs /proc: Linux only.
func WaitDead(t testing.TB, procs []Process) {
	t.Helper()
	t.Fatal("faultproxy: WaitDead is implemented on Linux only")
}
