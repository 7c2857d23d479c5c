package archetype

import (
	"hash/crc32"
	"sync"
)

// Every byte of a file is covered twice: by the CRC of its section or column blob and by the
// footer's CRC of the whole file. Computing both over the same bytes would read them twice, so the
// whole-file CRC is assembled from the pieces instead: crcCombine(crc(A), crc(B), len(B)) is
// crc(A followed by B), the method of zlib's crc32_combine, with precomputed operators that
// append 2^k zero bytes.

const castagnoliReversed = 0x82f63b78 // the CRC-32C polynomial, bit-reversed as hash/crc32 uses it

// zeroOps[k] is the GF(2) matrix that advances a CRC over 2^k zero bytes.
var zeroOps = func() (ops [64][32]uint32) {
	var odd, even [32]uint32
	odd[0] = castagnoliReversed // operator for one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	square(&even, &odd) // two zero bits
	square(&odd, &even) // four
	square(&ops[0], &odd)
	for k := 1; k < len(ops); k++ {
		square(&ops[k], &ops[k-1])
	}
	return ops
}()

func matTimes(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func square(dst, mat *[32]uint32) {
	for n := range dst {
		dst[n] = matTimes(mat, mat[n])
	}
}

// crcCombine returns the CRC32C of A followed by B from crc1 = CRC(A), crc2 = CRC(B), n = len(B).
func crcCombine(crc1, crc2 uint32, n int64) uint32 {
	for k := 0; n > 0; k, n = k+1, n>>1 {
		if n&1 != 0 {
			crc1 = matTimes(&zeroOps[k], crc1)
		}
	}
	return crc1 ^ crc2
}

// crcOf is the CRC32C of p.
func crcOf(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// crcBlock is the length of each of the three interleaved blocks crcCopy checksums at once
// (a power of two, so that its shift operator is one of zeroOps).
const crcBlock = 8 << 10

// A shiftTable advances a raw CRC-32C over a fixed number of zero bytes, one table per byte of
// the CRC: the operator is linear, so the four lookups XOR to the result.
type shiftTable [4][256]uint32

func (t *shiftTable) apply(crc uint32) uint32 {
	return t[0][byte(crc)] ^ t[1][byte(crc>>8)] ^ t[2][byte(crc>>16)] ^ t[3][crc>>24]
}

func newShiftTable(op *[32]uint32) *shiftTable {
	t := new(shiftTable)
	for k := range t {
		for b := range 256 {
			t[k][b] = matTimes(op, uint32(b)<<(8*k))
		}
	}
	return t
}

// blockShifts returns the operators over one and two of crcCopy's blocks, built on first use.
var blockShifts = sync.OnceValues(func() (one, two *shiftTable) {
	const _ = uint(crcBlock - 1<<13) // crcBlock is 2^13 bytes
	return newShiftTable(&zeroOps[13]), newShiftTable(&zeroOps[14])
})

// crcCopyPortable copies src to the start of dst with streamCopy and returns
// crc32.Update(crc, castagnoli, src), checksumming each piece just before it is copied.
func crcCopyPortable(dst, src []byte, crc uint32) uint32 {
	for i := 0; i < len(src); i += sumChunk {
		p := src[i:min(len(src), i+sumChunk)]
		crc = crc32.Update(crc, castagnoli, p)
		streamCopy(dst[i:], p)
	}
	return crc
}
