//go:build !linux

package stream

// threadCPU is not measured outside Linux: a group's CPU counter stays at zero.
func threadCPU() float64 { return 0 }
