//go:build !amd64

package archetype

// streamCopy copies src to the start of dst. (On amd64 it uses non-temporal stores.)
func streamCopy(dst, src []byte) { copy(dst, src) }

// crcCopy copies src to the start of dst and returns crc32.Update(crc, castagnoli, src).
func crcCopy(dst, src []byte, crc uint32) uint32 { return crcCopyPortable(dst, src, crc) }

// useCRCCopy is false: there is no CPU path to turn off.
var useCRCCopy = false
