//go:build !linux

package politeredis

import "syscall"

// serverProcAttr is nil where the kernel cannot tie the server's life to
// the test process's.
func serverProcAttr() *syscall.SysProcAttr { return nil }
