package archetype

import (
	"testing"

	"github.com/pierrec/lz4/v4"
)

// The decoder's bound on LZ4 expansion must hold for the most compressible input there is.
func TestLZ4RatioBound(t *testing.T) {
	var c compressor
	for _, n := range []int{1 << 10, 1 << 16, 1 << 20, 1 << 24} {
		b := blob{raw: make([]byte, n)}
		c.compress(&b)
		col := colEntry{raw: uint64(n), stored: uint64(len(b.stored))}
		t.Logf("%d zero bytes: %d stored, ratio %.1f", n, len(b.stored), float64(n)/float64(len(b.stored)))
		if msg := checkColumn(&fileType{}, 1, &col, true); msg != "" {
			t.Errorf("%d zero bytes compress to %d: %s", n, len(b.stored), msg)
		}
		out := make([]byte, n)
		if m, err := lz4.UncompressBlock(b.stored, out); err != nil || m != n {
			t.Errorf("%d zero bytes: %d, %v", n, m, err)
		}
	}
}
