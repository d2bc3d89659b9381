package chaos

import "syscall"

// childAttr puts a process of the fleet in a process group of its own (a Ctrl-C on the
// terminal reaches the harness, which stops the fleet in order) and has the kernel kill it
// when the harness's thread that started it ends, so that a killed harness leaves no
// process behind to hold a port or a data dir. The Go runtime ends a thread only when a
// goroutine locked to it exits; the harness locks none.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
