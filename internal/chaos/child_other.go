//go:build !linux

package chaos

import "syscall"

// childAttr puts a process of the fleet in a process group of its own.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
