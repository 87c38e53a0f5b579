package localcluster

import "syscall"

func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	// Own process group, so a Ctrl-C reaches the test binary first and Stop
	// still shuts the components down in order; killed with the test binary.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
