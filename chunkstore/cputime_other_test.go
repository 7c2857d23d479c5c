//go:build !linux

package chunkstore

import "time"

// threadCPU returns 0 where the thread's CPU time is not read: the
// benchmarks then report wall time only.
func threadCPU() time.Duration { return 0 }
