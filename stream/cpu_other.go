//go:build !linux

package stream

// threadCPU is not measured outside Linux: a group's CPU counter stays at zero.
func threadCPU() float64 { return 0 }

// setThreadNice does nothing outside Linux.
func setThreadNice(int) {}

// isMainThread is false outside Linux, where threads are not niced.
func isMainThread() bool { return false }
