package politeredis

import "syscall"

// serverProcAttr makes the kernel kill the test server when the test
// process dies, whatever way it dies.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
