package bench

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/vfs"
	arkserde "github.com/mlange-42/ark-serde"
	"github.com/mlange-42/ark/ecs"
)

// acceptanceN is the size of the world the codec's targets are stated for.
const acceptanceN = 100_000

// An encoding of the benchmark world to one destination.
type encoder func(dst io.Writer, w *ecs.World) error

func encodePECS(dst io.Writer, w *ecs.World) error { return archetype.Encode(dst, w) }

// ark-serde returns the file as bytes; writing them is part of encoding into a writer.
func encodeArkSerde(dst io.Writer, w *ecs.World) error {
	js, err := arkserde.Serialize(w)
	if err != nil {
		return err
	}
	_, err = dst.Write(js)
	return err
}

// BenchmarkAcceptance measures the codec's targets on the 100k-entity benchmark world, arksave
// beside ark-serde in the same run: encoding into io.Discard, into a new bytes.Buffer (no size
// hint: the codec grows it), into one bytes.Buffer reset and reused, appended to a nil slice
// (arksave's AppendEncode; ark-serde's Serialize returns a new slice anyway), into a new file
// (created, written, closed; no fsync), and decoding into a prepared world.
func BenchmarkAcceptance(b *testing.B) {
	w := newWorld(acceptanceN)
	pecs, js := files(b, w)
	dir := b.TempDir()
	type codec struct {
		name   string
		encode encoder
		size   int
	}
	codecs := []codec{{"PECS", encodePECS, len(pecs)}, {"ArkSerde", encodeArkSerde, len(js)}}
	// Each destination makes the call that encodes with a codec once.
	destinations := []struct {
		name string
		call func(c codec) func() error
	}{
		{"Discard", func(c codec) func() error { return func() error { return c.encode(io.Discard, w) } }},
		{"NewBuffer", func(c codec) func() error { return func() error { return c.encode(new(bytes.Buffer), w) } }},
		{"ReusedBuffer", func(c codec) func() error {
			var buf bytes.Buffer
			return func() error { buf.Reset(); return c.encode(&buf, w) }
		}},
		{"File", func(c codec) func() error {
			path := filepath.Join(dir, "world."+c.name)
			return func() error { return encodeFile(path, w, c.encode) }
		}},
	}
	for _, d := range destinations {
		for _, c := range codecs {
			b.Run("Encode_"+d.name+"/"+c.name, func(b *testing.B) { runCall(b, c.size, d.call(c)) })
		}
	}
	b.Run("Encode_Append/PECS", func(b *testing.B) {
		runCall(b, len(pecs), func() error { _, err := archetype.AppendEncode(nil, w); return err })
	})
	b.Run("Encode_Append/ArkSerde", func(b *testing.B) {
		runCall(b, len(js), func() error { _, err := arkserde.Serialize(w); return err })
	})
	b.Run("Decode/PECS", func(b *testing.B) {
		runCall(b, len(pecs), func() error { return archetype.Decode(bytes.NewReader(pecs), prepare()) })
	})
	b.Run("Decode/ArkSerde", func(b *testing.B) {
		runCall(b, len(js), func() error { return arkserde.Deserialize(js, prepare()) })
	})
}

// runCall times call, which handles size bytes of a file of the acceptance world.
func runCall(b *testing.B, size int, call func() error) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, acceptanceN, size)
}

// encodeFile writes the world to a new file at path with the given encoder.
func encodeFile(path string, w *ecs.World, enc encoder) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := enc(f, w); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BenchmarkAcceptanceRatios times the acceptance ratios with the two sides interleaved call by
// call, so that the shared machine's load changes hit both alike:
//
//   - NewBuffer_vs_Discard: arksave's Encode into a new bytes.Buffer against Encode into
//     io.Discard (target: at most 1.3);
//   - Append_vs_Discard: AppendEncode to a nil slice against Encode into io.Discard;
//   - ReusedBuffer_vs_Discard: Encode into one bytes.Buffer, reset and reused, against Encode
//     into io.Discard: the cost of copying the file into memory that is already the process's;
//   - Decode_ArkSerde_vs_PECS: ark-serde's Deserialize against arksave's Decode (target: at
//     least 55). Each ark-serde call takes about a quarter of a second: use -benchtime 5x or so.
func BenchmarkAcceptanceRatios(b *testing.B) {
	w := newWorld(acceptanceN)
	data, js := files(b, w)
	discard := func() error { return archetype.Encode(io.Discard, w) }
	var reused bytes.Buffer
	for _, dst := range []struct {
		name   string
		encode func() error
	}{
		{"NewBuffer", func() error { return archetype.Encode(new(bytes.Buffer), w) }},
		{"Append", func() error { _, err := archetype.AppendEncode(nil, w); return err }},
		{"ReusedBuffer", func() error { reused.Reset(); return archetype.Encode(&reused, w) }},
	} {
		b.Run(dst.name+"_vs_Discard", func(b *testing.B) { runPair(b, dst.encode, discard) })
	}
	// The plugin's real save path against the floor (every component column copied once):
	// the snapshot the game loop takes, whose world file is encoded into the memory the last
	// save handed back (the plugin's world holds the same entities as w); and, for scale,
	// Encode into a new bytes.Buffer.
	cols := columns(w)
	floorDst := make([]byte, componentBytes(w))
	floor := func() error {
		off := 0
		for _, c := range cols {
			off += copy(floorDst[off:], c)
		}
		return nil
	}
	b.Run("PluginSnapshot_vs_Floor", func(b *testing.B) {
		rt := pluginRuntime(b, newWorld(acceptanceN)) // a world of its own: the plugin adds resources
		runPair(b, func() error {
			snap, err := rt.Snapshot()
			if err != nil {
				return err
			}
			snap.Release()
			snap.ReleaseWorld()
			return nil
		}, floor)
	})
	b.Run("NewBuffer_vs_Floor", func(b *testing.B) {
		runPair(b, func() error { return archetype.Encode(new(bytes.Buffer), w) }, floor)
	})
	b.Run("Decode_ArkSerde_vs_PECS", func(b *testing.B) {
		runPair(b, func() error { return arkserde.Deserialize(js, prepare()) },
			func() error { return archetype.Decode(bytes.NewReader(data), prepare()) })
	})
}

// runPair runs a, then b, per iteration, and reports the time of a over the time of b, plus
// both per 1,000 entities.
func runPair(bm *testing.B, a, b func() error) {
	var ta, tb time.Duration
	for bm.Loop() {
		start := time.Now()
		if err := a(); err != nil {
			bm.Fatal(err)
		}
		mid := time.Now()
		if err := b(); err != nil {
			bm.Fatal(err)
		}
		ta, tb = ta+mid.Sub(start), tb+time.Since(mid)
	}
	bm.ReportMetric(float64(ta)/float64(tb), "ratio")
	bm.ReportMetric(float64(ta.Nanoseconds())/float64(bm.N)/float64(acceptanceN), "a-us/1k-entities")
	bm.ReportMetric(float64(tb.Nanoseconds())/float64(bm.N)/float64(acceptanceN), "b-us/1k-entities")
	bm.ReportMetric(0, "ns/op")
}

// flat is a generator of empty chunks, for a plugin that saves no chunks.
type flat struct{}

func (flat) Version() uint32                             { return 1 }
func (flat) Generate(_, _ int32, _ uint64, dst []uint32) { clear(dst) }

// pluginRuntime installs the plugin on w (a save in memory, autosave off) and returns its
// runtime, whose Snapshot is what the game loop pays for a save.
func pluginRuntime(b *testing.B, w *ecs.World) plugin.Runtime {
	if _, err := (arksave.Plugin{Dir: "/save", FS: vfs.NewMem(), ChunkSize: 16, TileSize: 8, Generator: flat{},
		Autosave: &autosave.Config{Interval: time.Hour}}).Install(w); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ecs.GetResource[arksave.Persistence](w).Close() })
	return ecs.GetResource[plugin.Slot](w).Runtime
}
