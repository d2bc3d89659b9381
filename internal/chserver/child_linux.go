package chserver

import "syscall"

// childAttr puts the server in a process group of its own (a Ctrl-C on the terminal goes to
// the parent, which stops the server in order through Close) and has the kernel kill it when
// the thread that started it ends: with the parent, killed or crashed, so that no orphan
// keeps the data dir locked (Start keeps that thread for the server's life).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
