package archetype_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/archetype"
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
		_, _ = archetype.ReadInfo(bytes.NewReader(data))
		_ = archetype.ExportJSON(io.Discard, bytes.NewReader(data))
		w := ecs.NewWorld()
		registerAll(w)
		if err := archetype.Decode(bytes.NewReader(data), w); err != nil {
			if !isSentinel(err) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			return
		}
		info, err := archetype.ReadInfo(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("Decode accepted what ReadInfo rejects: %v", err)
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
		if !bytes.Equal(data, again.Bytes()) {
			t.Fatalf("re-encoded %d bytes differ from the %d decoded", again.Len(), len(data))
		}
	})
}
