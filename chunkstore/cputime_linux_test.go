//go:build linux

package chunkstore

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID): what a benchmark measured on a machine shared
// with other work reports beside wall time, which that work inflates. The
// caller locks its goroutine to its thread (runtime.LockOSThread) around
// what it measures.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
