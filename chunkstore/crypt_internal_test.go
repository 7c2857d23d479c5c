package chunkstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// fuzzKey is the key of the encrypted fuzz seeds; the fuzz targets open
// them with it, without a key and with another.
var fuzzKey = bytes.Repeat([]byte{0x26}, 32)

// fixChecksums fills in the checksums of rec after a change to its
// bytes, so that only decryption can refuse it.
func fixChecksums(rec []byte) {
	rec[recordHCRCOff] = crc8.Checksum(rec[:recordHCRCOff])
	binary.LittleEndian.PutUint32(rec[recordCRCOff:], recordCRC(rec))
}

// An encrypted record decrypts to the record it was, and only where it
// was written: a record whose header names another chunk (its x, y or z)
// or another kind, with checksums made to match, is ErrWrongKey, never
// decoded; so is one opened with another key. Without a key it is
// ErrEncrypted.
func TestEncryptedRecordBoundToItsHeader(t *testing.T) {
	aead, err := recordCipher(fuzzKey)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := recordCipher(bytes.Repeat([]byte{1}, 32))
	e := &encoder{}
	raw := bytes.Repeat([]byte("secret pixels "), 20)
	plain := bytes.Clone(e.seal(pxsw.RecordFull, Key3(1, 2, 3), raw))
	enc, err := encryptRecord(aead, plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc, raw[:14]) || len(enc) != len(plain)+cryptOverhead {
		t.Fatalf("encrypted record of %d bytes (plaintext %d) holds the plaintext: %v", len(enc), len(plain), bytes.Contains(enc, raw[:14]))
	}
	h, err := checkRecord(enc, 4096)
	if err != nil || h.flags&flagEncrypted == 0 || h.keyAny(enc) != Key3(1, 2, 3) {
		t.Fatalf("checkRecord: %+v %v", h, err)
	}
	ph, got, err := decryptRecord(aead, h, enc, 4096, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := checkRecord(plain, 4096)
	if ph != want || !bytes.Equal(got[recordHeaderSize:], plain[recordHeaderSize:]) {
		t.Fatalf("decrypted %+v, want %+v", ph, want)
	}
	if p, err := payloadOf(ph, got, 4096, len(raw), nil); err != nil || !bytes.Equal(p, raw) {
		t.Fatalf("payload of the decrypted record: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(rec []byte)
	}{
		{"x", func(rec []byte) { rec[8]++ }},
		{"y", func(rec []byte) { rec[12]++ }},
		{"z", func(rec []byte) { rec[len(rec)-4]++ }},
		{"kind", func(rec []byte) { rec[16] = byte(pxsw.RecordDelta) }},
	} {
		moved := bytes.Clone(enc)
		c.change(moved)
		fixChecksums(moved)
		h, err := checkRecord(moved, 4096)
		if err != nil {
			t.Fatalf("%s: the moved record's checksums: %v", c.name, err)
		}
		if _, _, err := decryptRecord(aead, h, moved, 4096, nil); !errors.Is(err, archetype.ErrWrongKey) {
			t.Errorf("record moved to another %s: %v, want ErrWrongKey", c.name, err)
		}
	}
	if _, _, err := decryptRecord(other, h, enc, 4096, nil); !errors.Is(err, archetype.ErrWrongKey) || errors.Is(err, ErrCorrupt) {
		t.Errorf("another key: %v", err)
	}
	if _, _, err := decryptRecord(nil, h, enc, 4096, nil); !errors.Is(err, archetype.ErrEncrypted) || errors.Is(err, ErrCorrupt) {
		t.Errorf("no key: %v", err)
	}
	// Damage is found by the checksum first, with or without the key.
	enc[recordHeaderSize+cryptNonce+3] ^= 1
	if _, err := checkRecord(enc, 4096); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a flipped ciphertext byte: %v, want ErrCorrupt", err)
	}
	// A header claiming less than a nonce and a tag is damage.
	short := bytes.Clone(plain[:recordHeaderSize+10])
	sealRecord(short, pxsw.RecordBodies, codecNone, flagEncrypted, 0, 0)
	if _, err := checkRecord(short, 4096); !errors.Is(err, ErrCorrupt) {
		t.Errorf("an encrypted record of 10 bytes: %v, want ErrCorrupt", err)
	}
}

// encryptedFixture returns the files of a store written with fuzzKey: a
// full, a delta and a palette chunk with extra data, and an entity block
// with a body and a section.
func encryptedFixture(t *testing.T) map[string][]byte {
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	cfg.Key = fuzzKey
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	full, delta, pal := make([]uint32, 64), make([]uint32, 64), make([]uint32, 64)
	cfg.Generator.Generate(1, 20, 7, delta)
	delta[5] = 0x0404
	for i := range full {
		full[i], pal[i] = uint32(i)*0x9e3779b1, uint32(i%3)*0x01010101
	}
	b := s.NewBatch()
	b.PutChunkExtra(Pos{0, 20}, full, []byte("heightmap"))
	b.PutChunk(Pos{1, 20}, delta)
	b.PutChunk(Pos{2, 20}, pal)
	b.PutEntities(Pos{0, 20}, EntityBlock{Bodies: []Body{{ID: 1<<32 | 1, X: 3, Y: 4, Width: 3, Height: 2, Pixels: []uint32{1, 2, 3, 4, 5, 6},
		Shape: []bool{true, true, false, true, true, true}, Extension: []byte("ext")}}, Sections: [][]byte{[]byte("PECS section")}})
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.setAppend(storeOffset(2, dataHeaderSize)) // as if data file 1 were full
	b = s.NewBatch()
	b.PutChunk(Pos{3, 20}, full)
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	return fixtureFiles(t, s, mem)
}

// TestWriteEncryptedSeeds writes the fuzz seeds of an encrypted store
// (run with -update, as TestWriteFixtures).
func TestWriteEncryptedSeeds(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata")
	}
	files := encryptedFixture(t)
	writeSeed(t, "FuzzOpen", "v3-encrypted", files["w.pxsw"], files["w-data-1.pxsd"], files["w-data-2.pxsd"])
	hs, kinds := recordsOf(t, files["w-data-1.pxsd"], 1)
	for i, h := range hs {
		writeSeed(t, "FuzzRecord", fmt.Sprintf("v3-encrypted-%02d-%s", i, strings.ReplaceAll(kinds[i].String(), " ", "-")),
			files["w-data-1.pxsd"][h.FileOffset():h.FileOffset()+int64(h.Length)])
	}
}

// A store written with a key says so in its header slots (flag bit 3),
// from its creation and through every later commit and compaction, with
// or without the key: a reader that does not know encrypted records
// refuses it rather than take them for damage.
func TestEncryptedStoreHeaderFlag(t *testing.T) {
	files := encryptedFixture(t)
	h, err := parseHeader(files["w.pxsw"][:headerSize], 0)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := parseHeader(files["w.pxsw"][headerSize:2*headerSize], 1)
	if err != nil || h.flags&flagEncryptedRecs == 0 || h2.flags&flagEncryptedRecs == 0 {
		t.Fatalf("header slots' flags %#x %#x (%v), want bit 3", h.flags, h2.flags, err)
	}
	mem := vfs.NewMem()
	for name, data := range files {
		f, _ := mem.Create("/" + name)
		f.WriteAt(data, 0)
		f.Close()
	}
	cfg := fixtureConfig(mem) // no key
	s, err := Open("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	b.PutChunk(Pos{9, 9}, make([]uint32, 64))
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if s.hdr.flags&flagEncryptedRecs == 0 {
		t.Fatalf("after a commit and a compaction without the key: flags %#x", s.hdr.flags)
	}
	s.Close()
	plain := fixtureConfig(vfs.NewMem())
	if s, err = Create("/p.pxsw", &plain); err != nil || s.hdr.flags&flagEncryptedRecs != 0 {
		t.Fatalf("a store without a key: flags %#x, %v", s.hdr.flags, err)
	}
	s.Close()
}
