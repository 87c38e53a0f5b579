package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat. USER_HZ is
// 100 on every Linux the bench runs on; reading it would need cgo (sysconf).
const clockTick = 10 * time.Millisecond

// pluginPrefixes are the comm (executable name cut to 15 bytes) of the
// provider plugins: terraform-provider-k8sconnect under Terraform and
// OpenTofu, pulumi-resource-k8sconnect under Pulumi.
var pluginPrefixes = []string{"terraform-provi", "pulumi-resourc"}

// procStat is what the bench reads from /proc/<pid>/stat.
type procStat struct {
	pid, ppid int
	comm      string
	cpuTicks  uint64 // utime + stime
	startTime uint64 // in ticks since boot: with pid, names the process across pid reuse
}

// parseStat parses the contents of /proc/<pid>/stat. comm may hold spaces and
// parentheses, so the fields after it are found from the last ')'.
func parseStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("no (comm) in %q", b)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("pid: %w", err)
	}
	// After comm: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22),
	// numbered as in proc(5); rest[0] is field 3.
	rest := strings.Fields(string(b[end+1:]))
	if len(rest) < 20 {
		return procStat{}, fmt.Errorf("%d fields after comm", len(rest))
	}
	field := func(n int) (uint64, error) { return strconv.ParseUint(rest[n-3], 10, 64) }
	ppid, err := field(4)
	if err != nil {
		return procStat{}, fmt.Errorf("ppid: %w", err)
	}
	utime, err := field(14)
	if err != nil {
		return procStat{}, fmt.Errorf("utime: %w", err)
	}
	stime, err := field(15)
	if err != nil {
		return procStat{}, fmt.Errorf("stime: %w", err)
	}
	start, err := field(22)
	if err != nil {
		return procStat{}, fmt.Errorf("starttime: %w", err)
	}
	return procStat{pid: pid, ppid: int(ppid), comm: string(b[open+1 : end]), cpuTicks: utime + stime, startTime: start}, nil
}

// statusKiB returns a field in KiB of /proc/<pid>/status: VmHWM, the peak
// resident set; RssAnon, the resident memory not backed by a file (heap,
// stacks), the rest of the resident set being mostly the binary's own pages.
func statusKiB(b []byte, field string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				n, _ := strconv.ParseInt(fields[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

func isPlugin(comm string) bool {
	for _, p := range pluginPrefixes {
		if strings.HasPrefix(comm, p) {
			return true
		}
	}
	return false
}

// pluginSampler follows the provider plugins that one command starts: the
// plugin processes among its descendants (so that other people's terraform
// runs on the same machine are not counted). It keeps, per process, the last
// CPU time and peak RSS it saw. A process's CPU after its last sample (at most
// one interval) is missed; Terraform starts several short-lived plugin
// processes per command, so the figure is a slight underestimate.
type pluginSampler struct {
	root    int
	mu      sync.Mutex
	cpu     map[[2]uint64]uint64 // (pid, starttime) -> ticks
	peakKiB int64
	// The kernel keeps no peak of RssAnon: this is the largest sampled.
	peakAnonKiB int64
	stop        chan struct{}
	finished    chan struct{}
}

func startSampler(root int, every time.Duration) *pluginSampler {
	s := &pluginSampler{root: root, cpu: map[[2]uint64]uint64{}, stop: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// sample finds the plugins below root and records their CPU time and VmHWM.
func (s *pluginSampler) sample() {
	stats, ok := treeStats(s.root)
	if !ok {
		stats = allStats()
	}
	for _, st := range stats {
		if !isPlugin(st.comm) || !descends(stats, st.pid, s.root) {
			continue
		}
		var hwm, anon int64
		if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(st.pid), "status")); err == nil {
			hwm, anon = statusKiB(b, "VmHWM"), statusKiB(b, "RssAnon")
		}
		s.mu.Lock()
		s.cpu[[2]uint64{uint64(st.pid), st.startTime}] = st.cpuTicks
		s.peakKiB = max(s.peakKiB, hwm)
		s.peakAnonKiB = max(s.peakAnonKiB, anon)
		s.mu.Unlock()
	}
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false // exited meanwhile
	}
	st, err := parseStat(b)
	return st, err == nil
}

// treeStats reads the stat of root and its descendants only, found through
// /proc/<pid>/task/<tid>/children: a few dozen reads where scanning all of
// /proc takes hundreds, every 50 ms, on the machine being measured. false:
// the kernel has no children files (CONFIG_PROC_CHILDREN).
func treeStats(root int) (map[int]procStat, bool) {
	stats := map[int]procStat{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		st, ok := readStat(pid)
		if !ok {
			continue
		}
		stats[pid] = st
		tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			continue
		}
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "children"))
			if errors.Is(err, fs.ErrNotExist) && pid == root && len(stats) == 1 {
				if _, statErr := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name())); statErr == nil {
					return nil, false // the task exists, its children file does not
				}
			}
			for _, f := range strings.Fields(string(b)) {
				if child, err := strconv.Atoi(f); err == nil {
					if _, seen := stats[child]; !seen {
						queue = append(queue, child)
					}
				}
			}
		}
	}
	return stats, true
}

// allStats reads the stat of every process.
func allStats() map[int]procStat {
	stats := map[int]procStat{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if st, ok := readStat(pid); ok {
				stats[pid] = st
			}
		}
	}
	return stats
}

// descends reports whether pid is root or below it.
func descends(stats map[int]procStat, pid, root int) bool {
	for i := 0; i < 64 && pid > 1; i++ { // bounded: a pid cycle in a racy snapshot must not hang
		if pid == root {
			return true
		}
		st, ok := stats[pid]
		if !ok {
			return false
		}
		pid = st.ppid
	}
	return false
}

// Stop ends sampling and returns the plugins' total CPU time, how many plugin
// processes ran, their largest peak RSS and the largest anonymous part of an
// RSS sampled.
func (s *pluginSampler) Stop() (cpu time.Duration, processes int, peakKiB, peakAnonKiB int64) {
	close(s.stop)
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	var ticks uint64
	for _, t := range s.cpu {
		ticks += t
	}
	return time.Duration(ticks) * clockTick, len(s.cpu), s.peakKiB, s.peakAnonKiB
}

// apiServerPID is the embedded cluster's kube-apiserver process, from the pid
// file the cluster keeps in dir (localcluster's run/<name>.pid); 0 if unknown.
func apiServerPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "run", "kube-apiserver.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// cpuOf is the CPU time process pid has used so far; 0 if unknown.
func cpuOf(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	st, ok := readStat(pid)
	if !ok {
		return 0
	}
	return time.Duration(st.cpuTicks) * clockTick
}
