package localcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane component: either a child started by this
// process (cmd set, done closed when it exits) or one found through its pid
// file (an attached, detached cluster).
type process struct {
	name    string
	binary  string
	logPath string
	pid     int
	cmd     *exec.Cmd
	done    chan struct{} // closed when cmd exits; nil for adopted processes
	waitErr error
}

// startProcess runs binary with args, output appended to logs/<name>.log, and
// writes run/<name>.pid. Detached processes get their own session so that they
// outlive this one; the others are killed if this process dies (Linux).
func startProcess(dir, name, binary string, args, env []string, detach bool) (*process, error) {
	logPath := filepath.Join(dir, "logs", name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()

	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdin = devNull
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = sysProcAttr(detach)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, binary: binary, logPath: logPath, pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	pidFile := filepath.Join(dir, "run", name+".pid")
	if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n%s\n", p.pid, binary)), 0o600); err != nil {
		_ = p.kill()
		return nil, err
	}
	return p, nil
}

// adoptProcess reads run/<name>.pid. It returns nil if the file is missing or
// the process it names is gone (or is no longer that binary).
func adoptProcess(dir, name string) *process {
	data, err := os.ReadFile(filepath.Join(dir, "run", name+".pid"))
	if err != nil {
		return nil
	}
	lines := strings.SplitN(strings.TrimSpace(string(data)), "\n", 2)
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return nil
	}
	p := &process{name: name, pid: pid, logPath: filepath.Join(dir, "logs", name+".log")}
	if len(lines) == 2 {
		p.binary = strings.TrimSpace(lines[1])
	}
	if !p.alive() {
		return nil
	}
	return p
}

// exited reports whether the process is known to have ended.
func (p *process) exited() bool {
	if p.done != nil {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	return !p.alive()
}

// alive checks an adopted process: it exists, is not a zombie, and (where
// /proc tells) still runs the same binary, so a recycled pid is never signalled.
func (p *process) alive() bool {
	if p.done != nil {
		return !p.exited()
	}
	if err := syscall.Kill(p.pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid)); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	if p.binary != "" {
		if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid)); err == nil {
			argv0, _, _ := bytes.Cut(cmdline, []byte{0})
			if string(argv0) != p.binary {
				return false
			}
		}
	}
	return true
}

func (p *process) signal(sig syscall.Signal) error {
	if p.exited() {
		return nil
	}
	err := syscall.Kill(p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (p *process) kill() error { return p.signal(syscall.SIGKILL) }

// wait waits up to d for the process to end.
func (p *process) wait(d time.Duration) bool {
	if p.done != nil {
		select {
		case <-p.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	deadline := time.Now().Add(d)
	for {
		if !p.alive() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exitError describes how the process ended, with the end of its log.
func (p *process) exitError() error {
	how := "exited"
	if p.waitErr != nil {
		how = "exited: " + p.waitErr.Error()
	}
	return fmt.Errorf("%s %s%s", p.name, how, p.logTail())
}

// logTail is the last lines of the component's log, formatted for an error.
func (p *process) logTail() string {
	const lines = 25
	tail := tailFile(p.logPath, lines)
	if tail == "" {
		return fmt.Sprintf(" (log: %s, empty)", p.logPath)
	}
	return fmt.Sprintf("\nlast lines of %s:\n%s", p.logPath, tail)
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const limit = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - limit
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	text := strings.TrimRight(string(buf), "\n")
	all := strings.Split(text, "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	for i, l := range all {
		if len(l) > 400 {
			all[i] = l[:400] + "…"
		}
		all[i] = "  " + all[i]
	}
	return strings.Join(all, "\n")
}
