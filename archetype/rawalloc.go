package archetype

import (
	"bytes"
	"unsafe"
)

// Memory for files encoded into memory.
//
// Encode knows a file's size before its first byte, so a destination in memory is sized once.
// Go zeroes new memory (make, bytes.Buffer.Grow, slices.Grow), and for a file of megabytes that
// zeroing, and the page faults of touching the memory twice, cost as much as encoding the world:
// every byte is overwritten by the file at once anyway. So the destination is allocated without
// zeroing, as the standard library's strings.Builder.Grow and Pebble's rawalloc do, through
// runtime.mallocgc, which the Go runtime keeps reachable for this use (go.dev/issue/67401).
// No byte of it is visible before it is written: the writer fills it front to back, and the
// spare capacity left after an error is zeroed.

//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// rawBytes returns a byte slice of length 0 and capacity n whose memory is not zeroed: the
// caller must write every byte it makes visible.
func rawBytes(n int) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(mallocgc(uintptr(n), nil, false)), n)[:0]
}

// growRaw returns b with room for n more bytes, reallocating without zeroing when it has not.
func growRaw(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	return append(rawBytes(len(b)+n), b...)
}

// reserve makes room for n more bytes in buf, as buf.Grow(n) does but without zeroing new
// memory: the buffer's unread bytes move to new memory of exactly the size needed.
func reserve(buf *bytes.Buffer, n int) {
	if buf.Available() >= n {
		return
	}
	*buf = *bytes.NewBuffer(growRaw(buf.Bytes(), n))
}
