package crc8_test

import (
	"testing"

	"github.com/arksave/arksave/internal/crc8"
)

func TestCheckValue(t *testing.T) {
	if got := crc8.Checksum([]byte("123456789")); got != 0xF4 {
		t.Fatalf("check value %#x, want 0xf4", got)
	}
	if got := crc8.Update(crc8.Checksum([]byte("1234")), []byte("56789")); got != 0xF4 {
		t.Fatalf("incremental %#x, want 0xf4", got)
	}
}

// Every single-bit flip of a 24-byte entry changes the CRC.
func TestDetectsEveryBitFlip(t *testing.T) {
	entry := []byte("page-table-entry-24bytes")
	want := crc8.Checksum(entry)
	for i := range len(entry) * 8 {
		entry[i/8] ^= 1 << (i % 8)
		if crc8.Checksum(entry) == want {
			t.Fatalf("flip of bit %d not detected", i)
		}
		entry[i/8] ^= 1 << (i % 8)
	}
}
