package chunkstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// bandedPixels are n pixels of a few materials in bands, with a little
// noise: what zstd stores smaller than LZ4.
func bandedPixels(n, seed int) []uint32 {
	pix := make([]uint32, n)
	for i := range pix {
		pix[i] = uint32(1+(i/8+seed)%4)<<8 | uint32(seed&0xff)
		if (i*7+seed)%11 == 0 {
			pix[i] |= uint32(i%3) << 16
		}
	}
	return pix
}

// zstdRecord returns an LZ4 Full record of raw bytes and its zstd copy.
func zstdRecord(t *testing.T, raw []byte) (lz, z []byte) {
	t.Helper()
	e := &encoder{}
	lz = bytes.Clone(e.seal(pxsw.RecordFull, Key2(1, 2), raw))
	h, err := checkRecord(lz, 4096)
	if err != nil || h.codec != codecLZ4 {
		t.Fatalf("LZ4 record: codec %d: %v", h.codec, err)
	}
	z, _ = rezstd(h, lz, 4096, zstdLevelDefault, nil, nil)
	if z[17] != codecZstd || len(z) >= len(lz) {
		t.Fatalf("zstd copy: codec %d, %d bytes for LZ4's %d", z[17], len(z), len(lz))
	}
	return lz, z
}

// resealHeader recomputes both checksums of rec after an edit.
func resealHeader(rec []byte) {
	rec[recordHCRCOff] = crc8.Checksum(rec[:recordHCRCOff])
	binary.LittleEndian.PutUint32(rec[recordCRCOff:], recordCRC(rec))
}

func TestZstdRecordDecodes(t *testing.T) {
	raw := u32Bytes(bandedPixels(1024, 3))
	_, z := zstdRecord(t, raw)
	h, err := checkRecord(z, 4096)
	if err != nil {
		t.Fatal(err)
	}
	got, err := payloadOf(h, z, 4096, len(raw), nil)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("decoded %d bytes, equal %v: %v", len(got), bytes.Equal(got, raw), err)
	}
	// What the caller accepts bounds the raw size before anything is
	// allocated.
	if _, err := payloadOf(h, z, 4096, len(raw)-1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("raw size over the caller's bound: %v", err)
	}
}

// A frame whose size differs from the header's raw size, a damaged frame,
// an unknown codec and a raw size no zstd payload of that size can hold
// are refused as ErrCorrupt naming the record's offset, and never panic.
func TestZstdRecordRefused(t *testing.T) {
	raw := u32Bytes(bandedPixels(1024, 5))
	_, z := zstdRecord(t, raw)
	const off = 4096
	edit := func(fn func(rec []byte)) []byte {
		rec := bytes.Clone(z)
		fn(rec)
		resealHeader(rec)
		return rec
	}
	decode := func(rec []byte) error {
		h, err := checkRecord(rec, off)
		if err != nil {
			return err
		}
		_, err = payloadOf(h, rec, off, maxRecordPayload, nil)
		return err
	}
	for _, c := range []struct {
		name, want string
		rec        []byte
	}{
		{"raw size smaller than the frame's", "holds 4096 bytes, the record's header says 4092",
			edit(func(rec []byte) { binary.LittleEndian.PutUint32(rec[4:], uint32(len(raw)-4)) })},
		{"raw size larger than the frame's", "holds 4096 bytes, the record's header says 4100",
			edit(func(rec []byte) { binary.LittleEndian.PutUint32(rec[4:], uint32(len(raw)+4)) })},
		{"damaged frame", "zstd frame at offset 24",
			edit(func(rec []byte) { rec[len(rec)-3] ^= 0xff; rec[len(rec)-8] ^= 0x3c })},
		{"not a frame", "zstd frame at offset 24",
			edit(func(rec []byte) { copy(rec[recordHeaderSize:], "LZ4!") })},
		{"unknown codec", "unknown codec 3", edit(func(rec []byte) { rec[17] = 3 })},
		{"raw size beyond what the bytes can hold", "zstd bytes cannot hold",
			edit(func(rec []byte) { binary.LittleEndian.PutUint32(rec[4:], maxRecordPayload) })},
	} {
		err := decode(c.rec)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), fmt.Sprint(loc(off))) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q at %v", c.name, err, c.want, loc(off))
		}
	}
}

// zstdFixture writes a store whose newest generation keeps its chunk and
// body records as zstd in data file 2: the first commit's records, moved
// there by a compaction of data file 1 with ZstdArchive. It returns the
// store's files by base name.
func zstdFixture(t *testing.T) map[string][]byte {
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	cfg.ZstdArchive = true
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	for i := range 6 {
		b.PutChunk(Pos{int32(i), 20}, bandedPixels(64, i))
	}
	b.PutChunkExtra(Pos{6, 20}, bandedPixels(64, 9), []byte("chest at (3, 4)"))
	b.PutEntities(Pos{0, 20}, EntityBlock{Bodies: []Body{{ID: 1<<32 | 1, X: 3, Y: 4, Width: 16, Height: 8,
		Pixels: bandedPixels(128, 2), Shape: slices.Repeat([]bool{true}, 128), Extension: []byte("ext")}}})
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.setAppend(storeOffset(2, dataHeaderSize))
	st, err := s.compactFile(1)
	if err != nil || st.Zstd == 0 {
		t.Fatalf("compaction stored %d records as zstd: %v", st.Zstd, err)
	}
	if r := s.Check(); r.Zstd != st.Zstd {
		t.Fatalf("check counts %d zstd records, compaction wrote %d", r.Zstd, st.Zstd)
	}
	return fixtureFiles(t, s, mem)
}

// The fixture the fuzz seeds hold reads back, with or without ZstdArchive.
func TestZstdFixture(t *testing.T) {
	files := zstdFixture(t)
	mem := vfs.NewMem()
	for name, data := range files {
		f, err := mem.Create("/" + name)
		if err == nil {
			_, err = f.WriteAt(data, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg := fixtureConfig(mem)
	cfg.ReadOnly = true
	s, err := Open("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := make([]uint32, 64)
	for i := range 7 {
		want := bandedPixels(64, i)
		if i == 6 {
			want = bandedPixels(64, 9)
		}
		if _, err := s.Get(Pos{int32(i), 20}, dst); err != nil || !slices.Equal(dst, want) {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	bodies, err := s.Bodies(Pos{0, 20})
	if err != nil || len(bodies) != 1 || !slices.Equal(bodies[0].Pixels, bandedPixels(128, 2)) {
		t.Fatalf("bodies: %v", err)
	}
}

func u32Bytes(p []uint32) []byte {
	b := make([]byte, 4*len(p))
	putPixels(b, p, ^uint32(0))
	return b
}

// TestWriteZstdSeeds adds the fuzz seeds of zstd records: the store of
// zstdFixture for FuzzOpen, as is and with a frame damaged under a valid
// checksum, and each of its zstd records for FuzzRecord. Run it with
// -update.
func TestWriteZstdSeeds(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the zstd fuzz seeds")
	}
	files := zstdFixture(t)
	const main, d1, d2 = "w.pxsw", "w-data-1.pxsd", "w-data-2.pxsd"
	writeSeed(t, "FuzzOpen", "zstd-good", files[main], files[d1], files[d2])
	hs, _ := recordsOf(t, files[d2], 2)
	bad := bytes.Clone(files[d2])
	i := 0
	for _, h := range hs {
		rec := files[d2][h.FileOffset() : h.FileOffset()+int64(h.Length)]
		if rec[17] != codecZstd {
			continue
		}
		writeSeed(t, "FuzzRecord", fmt.Sprintf("zstd-%02d", i), rec)
		if i == 0 {
			bad[h.FileOffset()+recordHeaderSize+8] ^= 0x5a
			reseal(bad, h)
		}
		i++
	}
	writeSeed(t, "FuzzOpen", "zstd-bad-frame", files[main], files[d1], bad)
}
