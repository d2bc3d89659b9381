package stream

import "syscall"

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU returns the CPU time (user and system) the calling OS thread has used, in
// seconds; the caller has locked its goroutine to the thread (runtime.LockOSThread).
func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// setThreadNice lowers the calling OS thread's priority to nice (Linux applies
// setpriority to one thread when given its id). Raising it back needs a privilege, so the
// caller's thread must end after its work (measuredCall). A failure leaves the priority as
// it was: the work still runs.
func setThreadNice(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// isMainThread reports whether the calling goroutine runs on the process's main thread.
func isMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
