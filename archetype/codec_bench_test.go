package archetype_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// posVelWorld has n entities with Position and Velocity: raw columns only.
func posVelWorld(n int) *ecs.World {
	w := ecs.NewWorld()
	m := ecs.NewMap2[Position, Velocity](w)
	for i := range n {
		m.NewEntity(&Position{float64(i), 1}, &Velocity{1, float64(i % 7)})
	}
	return w
}

// namesWorld has n entities with a Name: msgpack columns only.
func namesWorld(n int) *ecs.World {
	w := ecs.NewWorld()
	m := ecs.NewMap1[Name](w)
	for i := range n {
		m.NewEntity(&Name{fmt.Sprintf("name-%d", i)})
	}
	return w
}

func benchEncode(b *testing.B, w *ecs.World, n int, opts ...archetype.Option) {
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w, opts...); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := archetype.Encode(&buf, w, opts...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "us/1k-entities")
}

func benchDecode(b *testing.B, w *ecs.World, n int, prepare func(*ecs.World), opts ...archetype.Option) {
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w, opts...); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		target := ecs.NewWorld()
		prepare(target)
		if err := archetype.Decode(bytes.NewReader(data), target); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "us/1k-entities")
}

func preparePosVel(w *ecs.World) { ecs.ComponentID[Position](w); ecs.ComponentID[Velocity](w) }
func prepareNames(w *ecs.World)  { ecs.ComponentID[Name](w) }

func BenchmarkEncode_PosVel_100k(b *testing.B) { benchEncode(b, posVelWorld(100_000), 100_000) }
func BenchmarkDecode_PosVel_100k(b *testing.B) {
	benchDecode(b, posVelWorld(100_000), 100_000, preparePosVel)
}

func BenchmarkEncode_PosVel_LZ4_100k(b *testing.B) {
	benchEncode(b, posVelWorld(100_000), 100_000, archetype.LZ4())
}

func BenchmarkDecode_PosVel_LZ4_100k(b *testing.B) {
	benchDecode(b, posVelWorld(100_000), 100_000, preparePosVel, archetype.LZ4())
}

func BenchmarkEncode_Names_10k(b *testing.B) { benchEncode(b, namesWorld(10_000), 10_000) }
func BenchmarkDecode_Names_10k(b *testing.B) {
	benchDecode(b, namesWorld(10_000), 10_000, prepareNames)
}

// BenchmarkReadInfo_PosVel_100k reads and checks a whole file without a world.
func BenchmarkReadInfo_PosVel_100k(b *testing.B) {
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, posVelWorld(100_000)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pecs.ReadInfo(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExportJSON_PosVel_10k writes a file as JSON.
func BenchmarkExportJSON_PosVel_10k(b *testing.B) {
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, posVelWorld(10_000)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := archetype.ExportJSON(io.Discard, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// The big-endian host's path, run here through the test hook: what swapping every raw column
// and the entity pool costs, against the little-endian fast path of the benchmarks above.
func BenchmarkEncode_PosVel_Swapped_100k(b *testing.B) {
	archetype.ForceByteSwap(b)
	benchEncode(b, posVelWorld(100_000), 100_000)
}

func BenchmarkDecode_PosVel_Swapped_100k(b *testing.B) {
	archetype.ForceByteSwap(b)
	benchDecode(b, posVelWorld(100_000), 100_000, preparePosVel)
}

// BenchmarkImportJSON_PosVel_10k turns the JSON export of a file back into the file.
func BenchmarkImportJSON_PosVel_10k(b *testing.B) {
	var file, js bytes.Buffer
	if err := archetype.Encode(&file, posVelWorld(10_000)); err != nil {
		b.Fatal(err)
	}
	if err := archetype.ExportJSON(&js, bytes.NewReader(file.Bytes())); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(js.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := archetype.ImportJSON(io.Discard, bytes.NewReader(js.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
