package archetype_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// FuzzDecode feeds arbitrary bytes to Decode, ReadInfo and ExportJSON. Seeds: the fixtures under
// testdata (testdata/fuzz/FuzzDecode holds crashers, if any) and fresh encoder output. When a
// Decode succeeds, encoding the world again must give the same bytes.
func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.pecs"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add(encode(f, smallWorld()))
	f.Add(encode(f, smallWorld(), archetype.LZ4()))
	f.Add(encode(f, richWorld(), archetype.LZ4()))
	f.Add(encode(f, valueWorld()))
	f.Add(encode(f, richWorld(), archetype.CompactPool(), archetype.LZ4()))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = pecs.ReadInfo(bytes.NewReader(data))
		_ = archetype.ExportJSON(io.Discard, bytes.NewReader(data))
		hdr, hdrErr := pecs.ReadHeader(data)
		if hdrErr != nil && !isSentinel(hdrErr) {
			t.Fatalf("ReadHeader: error matches no sentinel: %v", hdrErr)
		}
		w := fuzzWorld()
		if err := archetype.Decode(bytes.NewReader(data), w); err != nil {
			if !isSentinel(err) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			return
		}
		info, err := pecs.ReadInfo(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Decode accepted what ReadInfo rejects: %v", err)
		}
		if hdrErr != nil || hdr != info.Header {
			t.Fatalf("ReadHeader %+v, %v; ReadInfo's header %+v", hdr, hdrErr, info.Header)
		}
		if info.Header.VersionMajor != archetype.VersionMajor {
			return // an older format: re-encoding writes the current one
		}
		var opts []archetype.Option
		opts = append(opts, archetype.Timestamp(time.UnixMilli(info.Header.Timestamp)))
		if info.Header.Flags&archetype.FlagLZ4 != 0 {
			opts = append(opts, archetype.LZ4())
		}
		if info.Header.Flags&archetype.FlagCompactPool != 0 {
			opts = append(opts, archetype.CompactPool())
		}
		var again bytes.Buffer
		if err := archetype.Encode(&again, w, opts...); err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		// Decode reads one file from a stream: bytes after the header's file
		// size are not the file's (a caller's next data), so they are not compared.
		file := data[:min(uint64(len(data)), info.Header.FileSize)]
		if otherHost(w, info) {
			// A file of a host of another word size or alignment (a seed of a
			// 64-bit host read on a 32-bit one, the 386 relayout fixture here):
			// its type registry records other sizes, and raw columns were laid
			// out anew. The file written here must read back to itself.
			w2 := fuzzWorld()
			if err := archetype.Decode(bytes.NewReader(again.Bytes()), w2); err != nil {
				t.Fatalf("decoding the re-encoded file: %v", err)
			}
			file = again.Bytes()
			again.Reset()
			if err := archetype.Encode(&again, w2, opts...); err != nil {
				t.Fatalf("re-encoding again: %v", err)
			}
		}
		if !bytes.Equal(file, again.Bytes()) {
			t.Fatalf("re-encoded %d bytes differ from the %d decoded", again.Len(), len(file))
		}
	})
}

// FuzzImportJSON feeds arbitrary JSON to ImportJSON. Seeds: exports of the test worlds (every
// kind of value, relations, dead slots, LZ4) and crashers under testdata/fuzz/FuzzImportJSON.
// ImportJSON either fails with ErrBadJSON and writes nothing, or writes a file that reads back
// and whose export imports to the same bytes.
func FuzzImportJSON(f *testing.F) {
	for _, w := range []*ecs.World{smallWorld(), richWorld(), valueWorld(), oddWorld()} {
		f.Add(exportJSON(f, encode(f, w)))
	}
	f.Add(exportJSON(f, encode(f, smallWorld(), archetype.LZ4())))
	f.Add([]byte(`{"format":"pecs-json 1","pecs":"2.0","timestamp":0,"flags":[],"types":[],"pool":{"next":0,"available":0,"slots":[[0,4294967295],[1,4294967295]]},"tables":[],"resources":{}}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		var out bytes.Buffer
		if err := archetype.ImportJSON(&out, bytes.NewReader(js)); err != nil {
			if !errors.Is(err, archetype.ErrBadJSON) {
				t.Fatalf("error is not ErrBadJSON: %v", err)
			}
			if out.Len() != 0 {
				t.Fatalf("%d bytes written before the error %v", out.Len(), err)
			}
			return
		}
		var again, file bytes.Buffer
		if err := archetype.ExportJSON(&again, bytes.NewReader(out.Bytes())); err != nil {
			t.Fatalf("the imported file does not export: %v", err)
		}
		if err := archetype.ImportJSON(&file, &again); err != nil || !bytes.Equal(file.Bytes(), out.Bytes()) {
			t.Fatalf("the export of the imported file imports to other bytes (%v)", err)
		}
	})
}

// fuzzWorld is the world FuzzDecode decodes into: every test type, Padded included (the relayout
// fixtures are seeds).
func fuzzWorld() *ecs.World {
	w := ecs.NewWorld()
	registerAll(w)
	ecs.ComponentID[Padded](w)
	return w
}

// otherHost reports whether a file's type registry records a size for one of w's component
// types other than this host's: the file comes from a host of another word size or alignment.
func otherHost(w *ecs.World, info *pecs.Info) bool {
	sizes := map[string]uintptr{}
	for _, id := range ecs.ComponentIDs(w) {
		ci, _ := ecs.ComponentInfo(w, id)
		sizes[ci.Type.PkgPath()+"."+ci.Type.Name()] = ci.Type.Size()
	}
	for _, id := range ecs.ResourceIDs(w) {
		t, _ := ecs.ResourceType(w, id)
		sizes[t.PkgPath()+"."+t.Name()] = t.Size()
	}
	for _, t := range info.Types {
		if size, ok := sizes[t.Name]; ok && uintptr(t.Size) != size {
			return true
		}
	}
	return false
}
