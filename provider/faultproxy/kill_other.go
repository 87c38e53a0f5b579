//go:build !linux

package faultproxy

import (
	"errors"
	"os/exec"
)

// OwnGroup is a no-op here: KillTree needs Linux.
func OwnGroup(cmd *exec.Cmd) {}

// KillTree needs /proc: Linux only.
func KillTree(pid int) ([]Process, error) {
	return nil, errors.New("faultproxy: KillTree is implemented on Linux only")
}
