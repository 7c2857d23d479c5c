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
