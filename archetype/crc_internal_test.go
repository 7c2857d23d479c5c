package archetype

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestCRCCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for range 200 {
		cut := r.IntN(len(data) + 1)
		a, b := data[:cut], data[cut:]
		want := crc32.Checksum(data, castagnoli)
		if got := crcCombine(crcOf(a), crcOf(b), int64(len(b))); got != want {
			t.Fatalf("cut at %d: combined %08x, want %08x", cut, got, want)
		}
	}
}

// crcCopy and streamCopy give copy's bytes and crc32.Update's checksum for every length around
// their block sizes and every alignment of source and destination, on the CPU's path and on the
// portable one, and write nothing past the copy.
func TestCRCCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 4*3*crcBlock+300)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	lengths := []int{0, 1, 15, 16, 127, 128, 255, 256, 257, 1 << 10, sumChunk - 1, sumChunk + 1,
		3*crcBlock - 1, 3 * crcBlock, 3*crcBlock + 1, 3*crcBlock + 16 + 15, 6 * crcBlock, 9*crcBlock + 77}
	for range 40 {
		lengths = append(lengths, r.IntN(len(src)-32))
	}
	for _, portable := range []bool{false, true} {
		saved := useCRCCopy
		useCRCCopy = useCRCCopy && !portable
		for _, n := range lengths {
			so, do := r.IntN(32), r.IntN(32)
			p := src[so : so+n]
			dst := make([]byte, n+do+64)
			for i := range dst {
				dst[i] = 0xA5
			}
			start := r.Uint32()
			got := crcCopy(dst[do:do+n], p, start)
			if want := crc32.Update(start, castagnoli, p); got != want {
				t.Fatalf("portable=%v, %d bytes at offsets %d/%d: CRC %08x, want %08x", portable, n, so, do, got, want)
			}
			checkCopied(t, dst, do, p)
			for i := range dst {
				dst[i] = 0xA5
			}
			streamCopy(dst[do:do+n], p)
			checkCopied(t, dst, do, p)
		}
		useCRCCopy = saved
	}
}

// checkCopied fails unless dst holds p at offset off and the fill byte 0xA5 around it.
func checkCopied(t *testing.T, dst []byte, off int, p []byte) {
	t.Helper()
	for i, c := range dst {
		want := byte(0xA5)
		if i >= off && i < off+len(p) {
			want = p[i-off]
		}
		if c != want {
			t.Fatalf("%d bytes copied to offset %d: byte %d is %#x, want %#x", len(p), off, i, c, want)
		}
	}
}
