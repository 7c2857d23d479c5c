package archetype

import (
	"hash/crc32"
	"unsafe"
)

// Copies into large files in memory.
//
// An ordinary copy into memory that is not in the CPU's cache reads every destination cache
// line before it overwrites it, and a file of megabytes is never in the cache. The file's
// checksum needs every byte read once anyway. So on amd64 the bytes are checksummed and copied
// in one pass, with non-temporal stores that neither read nor keep the destination: encoding
// into a new buffer then costs little more than encoding into io.Discard.

//go:noescape
func ntcopy(dst, src unsafe.Pointer, n uintptr)

//go:noescape
func crcCopy3(dst, src unsafe.Pointer, blk uintptr, crc uint32) (a, b, c uint32)

func hasSSE42() bool

// useCRCCopy is whether the CPU has the CRC32 instruction; tests turn it off to cover the
// portable path.
var useCRCCopy = hasSSE42()

// streamCopy copies src to the start of dst, which must be at least as long, as copy does, but
// with non-temporal stores for all but the unaligned ends.
func streamCopy(dst, src []byte) {
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 15)
	if len(src) < head+256 {
		copy(dst, src)
		return
	}
	copy(dst[:head], src)
	body := (len(src) - head) &^ 127
	ntcopy(unsafe.Pointer(&dst[head]), unsafe.Pointer(&src[head]), uintptr(body))
	copy(dst[head+body:], src[head+body:])
}

// crcCopy copies src to the start of dst, which must be at least as long, as streamCopy does,
// and returns crc32.Update(crc, castagnoli, src).
func crcCopy(dst, src []byte, crc uint32) uint32 {
	if !useCRCCopy {
		return crcCopyPortable(dst, src, crc)
	}
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst))) & 15)
	if len(src) < head+3*crcBlock {
		return crcCopyPortable(dst, src, crc)
	}
	copy(dst[:head], src)
	raw := ^crc32.Update(crc, castagnoli, src[:head])
	one, two := blockShifts()
	i := head
	for ; len(src)-i >= 3*crcBlock; i += 3 * crcBlock {
		a, b, c := crcCopy3(unsafe.Pointer(&dst[i]), unsafe.Pointer(&src[i]), crcBlock, raw)
		raw = two.apply(a) ^ one.apply(b) ^ c
	}
	return crcCopyPortable(dst[i:], src[i:], ^raw)
}
