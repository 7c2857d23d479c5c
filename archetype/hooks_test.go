package archetype

import (
	"bytes"
	"testing"
)

// Test hooks for the black-box tests of package archetype_test.

// ForceByteSwap makes Encode and Decode take a big-endian host's path on this machine until the
// test ends: raw columns and the entity pool are byte-swapped on their way in and out.
func ForceByteSwap(t testing.TB) {
	t.Helper()
	old := hostBigEndian
	hostBigEndian = true
	t.Cleanup(func() { hostBigEndian = old })
}

// StoredColumn is one column of a file as stored (after LZ4, before any byte swap).
type StoredColumn struct {
	Table int
	Type  string // the component type's full name
	Raw   bool   // raw memory, not msgpack
	Data  []byte
}

// StoredSections returns the entity pool's slots and alive ids and every column as the file
// stores them. bigEndian says which host's path wrote the file (the pool is checked as read).
func StoredSections(t testing.TB, data []byte, bigEndian bool) (slots, alive []byte, cols []StoredColumn) {
	t.Helper()
	old := hostBigEndian
	hostBigEndian = bigEndian
	defer func() { hostBigEndian = old }()
	f := newFileReader(bytes.NewReader(data), nil)
	if err := f.readHead(); err != nil {
		t.Fatalf("StoredSections: %v", err)
	}
	if err := f.readPool(); err != nil {
		t.Fatalf("StoredSections: %v", err)
	}
	slots = append(slots, bytesOf(f.pool.slots)...)
	alive = append(alive, bytesOf(f.pool.alive)...)
	if bigEndian { // back to the bytes as stored
		swapWords(slots, 4)
		swapWords(alive, 4)
	}
	for i := range f.tables {
		e := &f.tables[i]
		for j := range e.cols {
			c := &e.cols[j]
			b, err := f.readBlob(f.columnSection(i, c), c.raw, c.stored, nil)
			if err != nil {
				t.Fatalf("StoredSections: %v", err)
			}
			ft := &f.types[c.comp]
			cols = append(cols, StoredColumn{Table: i, Type: ft.name, Raw: ft.is(TypeRaw), Data: bytes.Clone(b)})
		}
	}
	return slots, alive, cols
}
