package archetype_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

var update = flag.Bool("update", false, "rewrite the files under testdata")

// smallWorld has one of everything and encodes to well under a kilobyte, so that every bit of
// its file can be flipped in a test.
func smallWorld() *ecs.World {
	w := ecs.NewWorld()
	registerAll(w)
	ecs.GetResource[Tick](w).N = 7
	pv := ecs.NewMap2[Position, Velocity](w)
	a := pv.NewEntity(&Position{1, 2}, &Velocity{3, 4})
	b := pv.NewEntity(&Position{5, 6}, &Velocity{7, 8})
	w.RemoveEntity(a)
	ecs.NewMap2[Name, Marker](w).NewEntity(&Name{"hi"}, &Marker{})
	ecs.NewMap2[Health, ChildOf](w).NewEntity(&Health{1, 2}, &ChildOf{}, ecs.Rel[ChildOf](b))
	return w
}

// sentinels are the errors a damaged file may produce.
var sentinels = []error{archetype.ErrCorrupt, archetype.ErrVersion, archetype.ErrUnknownType, archetype.ErrIncompatible,
	archetype.ErrEncrypted, archetype.ErrWrongKey}

func isSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// readAll runs every reader of the package over data and returns their errors.
func readAll(data []byte) (decodeErr, infoErr, exportErr error) {
	w := ecs.NewWorld()
	registerAll(w)
	decodeErr = archetype.Decode(bytes.NewReader(data), w)
	_, infoErr = pecs.ReadInfo(bytes.NewReader(data))
	exportErr = archetype.ExportJSON(io.Discard, bytes.NewReader(data))
	return
}

func TestEveryBitFlipIsDetected(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		opts := []archetype.Option{}
		if lz4 {
			opts = append(opts, archetype.LZ4())
		}
		data := encode(t, smallWorld(), opts...)
		t.Logf("lz4=%v: %d bytes, %d flips", lz4, len(data), 8*len(data))
		bad := bytes.Clone(data)
		for i := range data {
			for bit := range 8 {
				bad[i] ^= 1 << bit
				d, info, x := readAll(bad)
				for _, err := range []error{d, info, x} {
					if !isSentinel(err) {
						t.Fatalf("lz4=%v: flipping bit %d of byte %d: want a sentinel error, got %v", lz4, bit, i, err)
					}
				}
				bad[i] ^= 1 << bit
			}
		}
	}
}

func TestEveryTruncationIsDetected(t *testing.T) {
	data := encode(t, smallWorld(), archetype.LZ4())
	for n := range len(data) {
		d, info, x := readAll(data[:n])
		for _, err := range []error{d, info, x} {
			if !errors.Is(err, archetype.ErrCorrupt) || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("truncated to %d of %d bytes: want ErrCorrupt and io.ErrUnexpectedEOF, got %v", n, len(data), err)
			}
		}
	}
}

// layout gives the offsets of a file's sections, read from their heads.
type layout struct {
	registry, tables, pool, data, resources, footer int
}

func layoutOf(t testing.TB, data []byte) layout {
	t.Helper()
	le := binary.LittleEndian
	var l layout
	l.registry = 64
	l.tables = l.registry + int(le.Uint64(data[l.registry+4:]))
	l.pool = l.tables + int(le.Uint64(data[l.tables+4:]))
	l.data = l.pool + int(le.Uint64(data[l.pool+4:]))
	l.footer = len(data) - 32
	info := readInfo(t, data)
	l.resources = l.data
	if n := len(info.Tables); n > 0 {
		l.resources = int(info.Tables[n-1].DataOffset + info.Tables[n-1].DataSize)
	}
	return l
}

// fixSums recomputes the header CRC and the footer checksum, so that only the damage under test
// remains.
func fixSums(data []byte) []byte {
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	le.PutUint32(data[60:], crc32.Checksum(data[:60], tab))
	f := len(data) - 32
	le.PutUint64(data[f+4:], uint64(crc32.Checksum(data[:f], tab)))
	return data
}

// fixSection recomputes the CRC of the section starting at off.
func fixSection(data []byte, off int) []byte {
	size := int(binary.LittleEndian.Uint64(data[off+4:]))
	binary.LittleEndian.PutUint32(data[off+size-4:], crc32.Checksum(data[off:off+size-4], crc32.MakeTable(crc32.Castagnoli)))
	return fixSums(data)
}

type fixture struct {
	name  string
	make  func(valid []byte, l layout) []byte
	wants []error // errors.Is targets; none for a valid file
}

var fixtures = []fixture{
	{"valid.pecs", func(v []byte, _ layout) []byte { return v }, nil},
	{"bad-magic.pecs", func(v []byte, _ layout) []byte { v[0] = 'X'; return v }, []error{archetype.ErrCorrupt}},
	{"future-major.pecs", func(v []byte, _ layout) []byte { v[4] = archetype.VersionMajor + 1; return fixSums(v) }, []error{archetype.ErrVersion}},
	{"future-minor.pecs", func(v []byte, _ layout) []byte { v[6] = 9; return fixSums(v) }, []error{archetype.ErrVersion}},
	{"unknown-flags.pecs", func(v []byte, _ layout) []byte { v[9] = 0x80; return fixSums(v) }, []error{archetype.ErrVersion}},
	{"bad-header-crc.pecs", func(v []byte, _ layout) []byte { v[13] ^= 1; return v }, []error{archetype.ErrCorrupt}},
	{"truncated-header.pecs", func(v []byte, _ layout) []byte { return v[:40] }, []error{archetype.ErrCorrupt, io.ErrUnexpectedEOF}},
	{"bad-registry-crc.pecs", func(v []byte, l layout) []byte { v[l.registry+30] ^= 4; return fixSums(v) }, []error{archetype.ErrCorrupt}},
	{"truncated-registry.pecs", func(v []byte, l layout) []byte { return v[:l.registry+20] }, []error{archetype.ErrCorrupt, io.ErrUnexpectedEOF}},
	{"huge-type-count.pecs", func(v []byte, l layout) []byte {
		binary.LittleEndian.PutUint32(v[l.registry:], 1<<30)
		return fixSection(v, l.registry)
	}, []error{archetype.ErrCorrupt}},
	{"bad-table-crc.pecs", func(v []byte, l layout) []byte { v[l.tables+20] ^= 1; return fixSums(v) }, []error{archetype.ErrCorrupt}},
	{"table-size-past-end.pecs", func(v []byte, l layout) []byte {
		binary.LittleEndian.PutUint64(v[l.tables+4:], 1<<40)
		return fixSums(v)
	}, []error{archetype.ErrCorrupt}},
	{"bad-entity-count.pecs", func(v []byte, l layout) []byte {
		binary.LittleEndian.PutUint32(v[l.tables+12+8:], 1000) // first entry's entity count
		return fixSection(v, l.tables)
	}, []error{archetype.ErrCorrupt}},
	{"bad-pool-crc.pecs", func(v []byte, l layout) []byte { v[l.pool+40] ^= 1; return fixSums(v) }, []error{archetype.ErrCorrupt}},
	{"truncated-pool.pecs", func(v []byte, l layout) []byte { return v[:l.pool+30] }, []error{archetype.ErrCorrupt, io.ErrUnexpectedEOF}},
	{"pool-duplicate-alive.pecs", func(v []byte, l layout) []byte {
		// The second alive id repeats the first.
		slots := int(binary.LittleEndian.Uint32(v[l.pool:]))
		alive := l.pool + 24 + 8*slots
		copy(v[alive+4:alive+8], v[alive:alive+4])
		return fixSection(v, l.pool)
	}, []error{archetype.ErrCorrupt}},
	{"pool-free-list-out-of-range.pecs", func(v []byte, l layout) []byte {
		binary.LittleEndian.PutUint32(v[l.pool+12:], 1<<20) // next
		binary.LittleEndian.PutUint32(v[l.pool+16:], 1)     // available
		binary.LittleEndian.PutUint32(v[l.pool+20:], 2)     // alive count
		return fixSection(v, l.pool)
	}, []error{archetype.ErrCorrupt}},
	{"bad-column-crc.pecs", func(v []byte, l layout) []byte { v[l.data+3] ^= 1; return fixSums(v) }, []error{archetype.ErrCorrupt}},
	{"truncated-column.pecs", func(v []byte, l layout) []byte { return v[:l.data+5] }, []error{archetype.ErrCorrupt, io.ErrUnexpectedEOF}},
	{"bad-resource-crc.pecs", func(v []byte, l layout) []byte { v[l.resources+14] ^= 1; return fixSums(v) }, []error{archetype.ErrCorrupt}},
	{"bad-footer-checksum.pecs", func(v []byte, l layout) []byte { v[l.footer+4] ^= 1; return v }, []error{archetype.ErrCorrupt}},
	{"bad-footer-magic.pecs", func(v []byte, l layout) []byte { v[l.footer+20] = 'X'; return v }, []error{archetype.ErrCorrupt}},
	{"truncated-footer.pecs", func(v []byte, l layout) []byte { return v[:l.footer+10] }, []error{archetype.ErrCorrupt, io.ErrUnexpectedEOF}},
	{"lying-file-size.pecs", func(v []byte, _ layout) []byte {
		binary.LittleEndian.PutUint64(v[40:], 1<<50)
		return fixSums(v)
	}, []error{archetype.ErrCorrupt}},
	{"unknown-type.pecs", func(v []byte, _ layout) []byte {
		w := ecs.NewWorld()
		ecs.NewMap1[OldPos](w).NewEntity(&OldPos{1, 2})
		var buf bytes.Buffer
		if err := archetype.Encode(&buf, w, archetype.Timestamp(testTime)); err != nil {
			panic(err)
		}
		return buf.Bytes()
	}, []error{archetype.ErrUnknownType}},
}

// TestCorruptFixtures decodes the files under testdata, each named after its defect; with
// -update it writes them first. valid.pecs also pins the format: if it stops decoding, the
// format changed and needs a new version.
func TestCorruptFixtures(t *testing.T) {
	valid := encode(t, smallWorld())
	l := layoutOf(t, valid)
	for _, fx := range fixtures {
		path := filepath.Join("testdata", fx.name)
		if *update {
			expectNoError(t, os.WriteFile(path, fx.make(bytes.Clone(valid), l), 0o644), "writing "+path)
		}
		data, err := os.ReadFile(path)
		expectNoError(t, err, "reading fixture (run go test -run TestCorruptFixtures -update to create it)")
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		d, info, x := readAll(data)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		for name, err := range map[string]error{"Decode": d, "ReadInfo": info, "ExportJSON": x} {
			wants := fx.wants
			if name != "Decode" && len(wants) == 1 && wants[0] == archetype.ErrUnknownType {
				wants = nil // only Decode needs the Go types
			}
			if wants == nil && err != nil {
				t.Errorf("%s: %s: %v", fx.name, name, err)
			}
			for _, want := range wants {
				if !errors.Is(err, want) {
					t.Errorf("%s: %s: want an error matching %v, got %v", fx.name, name, want, err)
				}
			}
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: reading a %d-byte file allocated %d bytes", fx.name, len(data), alloc)
		}
		if d != nil {
			t.Logf("%-28s %v", fx.name, d)
		}
	}
	if *update {
		// Seeds of FuzzDecode in the fuzzing engine's corpus format.
		dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
		expectNoError(t, os.MkdirAll(dir, 0o755), "creating "+dir)
		for name, data := range map[string][]byte{"valid": valid, "valid-lz4": encode(t, smallWorld(), archetype.LZ4()), "values": encode(t, valueWorld())} {
			seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
			expectNoError(t, os.WriteFile(filepath.Join(dir, name), []byte(seed), 0o644), "writing seed")
		}
	}
}

// Every error names the section and the offset.
func TestErrorsNameSectionAndOffset(t *testing.T) {
	valid := encode(t, smallWorld())
	for i := 0; i < len(valid); i += 7 {
		bad := bytes.Clone(valid)
		bad[i] ^= 0x10
		w := ecs.NewWorld()
		registerAll(w)
		err := archetype.Decode(bytes.NewReader(bad), w)
		if errors.Is(err, archetype.ErrCorrupt) && !bytes.Contains([]byte(err.Error()), []byte("offset")) {
			t.Errorf("byte %d: error without offset: %v", i, err)
		}
		if err != nil && !bytes.HasPrefix([]byte(err.Error()), []byte("archetype: ")) {
			t.Errorf("byte %d: error without package prefix: %v", i, err)
		}
	}
}
