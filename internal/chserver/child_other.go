//go:build !linux

package chserver

import "syscall"

// childAttr puts the server in a process group of its own. Outside Linux nothing kills it
// with its parent; Start stops a server left over from a parent that died (its pid file).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
