package faultproxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OwnGroup makes cmd start in a process group of its own, so that KillTree
// can end it and its plugins without touching the test process.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillTree ends pid and every process descended from it with SIGKILL, all at
// once, as a machine losing power would: the processes are stopped first (so
// none of them sees another die, or forks meanwhile), then every process group
// led by one of them is killed, then each process. Plugins that run in process
// groups of their own (Pulumi starts each plugin in a new group) are included.
// Only pid and its descendants are touched. It returns what it killed.
func KillTree(pid int) ([]Process, error) {
	if pid <= 1 || pid == os.Getpid() {
		return nil, fmt.Errorf("faultproxy: refusing to kill pid %d", pid)
	}
	tree := map[int]bool{}
	// Stop what is there, then look again for children forked meanwhile.
	for range 3 {
		pids, err := descendants(pid)
		if err != nil {
			return nil, err
		}
		grew := false
		for _, p := range pids {
			if !tree[p] {
				tree[p], grew = true, true
				_ = syscall.Kill(p, syscall.SIGSTOP)
			}
		}
		if !grew {
			break
		}
	}
	var killed []Process
	for p := range tree {
		killed = append(killed, Process{PID: p, Command: command(p)})
	}
	sort.Slice(killed, func(i, j int) bool { return killed[i].PID < killed[j].PID })
	for p := range tree {
		if pgid, err := syscall.Getpgid(p); err == nil && pgid == p {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	for p := range tree {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return killed, nil
}

// command is the base name of a process's executable (argv[0]).
func command(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return ""
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0)
}

// descendants lists pid and every live process below it, from /proc.
func descendants(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], p)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		return nil, fmt.Errorf("faultproxy: process %d: %w", pid, err)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// WaitDead waits until the processes KillTree killed are gone (reaped or
// zombies), so that a test looks at the cluster only once nothing of the
// killed run can still send a request.
func WaitDead(t testing.TB, procs []Process) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, proc := range procs {
		pid := proc.PID
		for {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			s := string(stat)
			i := strings.LastIndexByte(s, ')')
			if err != nil || i < 0 || strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived SIGKILL", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
