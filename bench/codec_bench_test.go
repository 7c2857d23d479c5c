package bench

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/arksave/arksave/archetype"
	arkserde "github.com/mlange-42/ark-serde"
	"github.com/mlange-42/ark/ecs"
)

// Sizes of the benchmark world.
var sizes = []int{10_000, 100_000}

// report adds the figures the README quotes: microseconds per 1,000 entities and, where a file
// is involved, its bytes per entity.
func report(b *testing.B, n, fileBytes int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "us/1k-entities")
	if fileBytes > 0 {
		b.ReportMetric(float64(fileBytes)/float64(n), "file-B/entity")
	}
}

// BenchmarkCodec measures, in one run, arksave's Encode and Decode (plain and with LZ4),
// ark-serde's Serialize and Deserialize, and the floor: copying every component column once.
// Each Decode includes creating and preparing the target world, for both codecs.
func BenchmarkCodec(b *testing.B) {
	for _, n := range sizes {
		w := newWorld(n)
		var pecs bytes.Buffer
		if err := archetype.Encode(&pecs, w); err != nil {
			b.Fatal(err)
		}
		js, err := arkserde.Serialize(w)
		if err != nil {
			b.Fatal(err)
		}

		b.Run(fmt.Sprintf("Floor_memcpy_%dk", n/1000), func(b *testing.B) {
			cols := columns(w)
			dst := make([]byte, componentBytes(w))
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				off := 0
				for _, c := range cols {
					off += copy(dst[off:], c)
				}
			}
			report(b, n, 0)
		})
		b.Run(fmt.Sprintf("Encode_PECS_%dk", n/1000), func(b *testing.B) {
			var buf bytes.Buffer
			buf.Grow(pecs.Len())
			b.SetBytes(int64(pecs.Len()))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := archetype.Encode(&buf, w); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, pecs.Len())
		})
		b.Run(fmt.Sprintf("Encode_PECS_LZ4_%dk", n/1000), func(b *testing.B) {
			var buf bytes.Buffer
			if err := archetype.Encode(&buf, w, archetype.LZ4()); err != nil {
				b.Fatal(err)
			}
			size := buf.Len()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := archetype.Encode(&buf, w, archetype.LZ4()); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, size)
		})
		b.Run(fmt.Sprintf("Encode_ArkSerde_%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := arkserde.Serialize(w); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(js))
		})
		b.Run(fmt.Sprintf("Decode_PECS_%dk", n/1000), func(b *testing.B) {
			data := pecs.Bytes()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := archetype.Decode(bytes.NewReader(data), prepare()); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(data))
		})
		b.Run(fmt.Sprintf("Decode_PECS_LZ4_%dk", n/1000), func(b *testing.B) {
			var buf bytes.Buffer
			if err := archetype.Encode(&buf, w, archetype.LZ4()); err != nil {
				b.Fatal(err)
			}
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := archetype.Decode(bytes.NewReader(data), prepare()); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(data))
		})
		b.Run(fmt.Sprintf("Decode_ArkSerde_%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			for b.Loop() {
				if err := arkserde.Deserialize(js, prepare()); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(js))
		})
	}
}

// BenchmarkMemory reports how much memory Encode and Decode need beyond the world itself,
// relative to the world's component bytes (the size of all its component columns).
//
// Method: the garbage collector runs before and after one call. The extra memory of a call is
// what it allocated minus what is still live after it: for Encode (writing to io.Discard) every
// allocated byte, for Decode (reading from a byte slice) everything except the new world. The
// bytes allocated during a call bound from above the most it holds at any instant, so these
// ratios are upper bounds of the peak.
//
// Decode builds the world's tables, and Ark grows a table by doubling its capacity as entities
// arrive; the old arrays are garbage. That cost belongs to Ark and to the world's shape: building
// the same tables entity by entity without any file costs the same. peak-extra/comp-bytes
// subtracts it (measured the same way on a world built with the calls Decode makes, without a
// file); with-ark-growth/comp-bytes keeps it.
func BenchmarkMemory(b *testing.B) {
	const n = 100_000
	w := newWorld(n)
	comp := float64(componentBytes(w))
	var pecs bytes.Buffer
	if err := archetype.Encode(&pecs, w); err != nil {
		b.Fatal(err)
	}
	js, err := arkserde.Serialize(w)
	if err != nil {
		b.Fatal(err)
	}
	sh := shapeOf(w)
	growth := extraBytes(func() any { return buildShape(sh) })
	for range 2 { // the first run also fills caches
		growth = min(growth, extraBytes(func() any { return buildShape(sh) }))
	}
	run := func(b *testing.B, decoding bool, call func() any) {
		var extra float64
		for b.Loop() {
			extra = max(extra, extraBytes(call))
		}
		b.ReportMetric(comp, "comp-bytes")
		if decoding {
			b.ReportMetric((extra-growth)/comp, "peak-extra/comp-bytes")
			b.ReportMetric(extra/comp, "with-ark-growth/comp-bytes")
		} else {
			b.ReportMetric(extra/comp, "peak-extra/comp-bytes")
		}
	}
	b.Run("Encode_PECS_100k", func(b *testing.B) {
		run(b, false, func() any {
			if err := archetype.Encode(io.Discard, w); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	})
	b.Run("Encode_ArkSerde_100k", func(b *testing.B) {
		run(b, false, func() any {
			if _, err := arkserde.Serialize(w); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	})
	b.Run("Decode_PECS_100k", func(b *testing.B) {
		data := pecs.Bytes()
		run(b, true, func() any {
			target := prepare()
			if err := archetype.Decode(bytes.NewReader(data), target); err != nil {
				b.Fatal(err)
			}
			return target
		})
	})
	b.Run("Decode_ArkSerde_100k", func(b *testing.B) {
		run(b, true, func() any {
			target := prepare()
			if err := arkserde.Deserialize(js, target); err != nil {
				b.Fatal(err)
			}
			return target
		})
	})
}

// extraBytes runs call between two garbage collections and returns the bytes it allocated that
// are not live afterwards.
func extraBytes(call func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := call()
	runtime.GC()
	runtime.ReadMemStats(&after)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	live := max(int64(after.HeapAlloc)-int64(before.HeapAlloc), 0)
	runtime.KeepAlive(keep)
	return float64(allocated - live)
}

// shape is what buildShape needs to rebuild a world's tables: a pool of free slots and, per
// table, its components and size.
type shape struct {
	dump   ecs.EntityDump
	tables []shapeTable
}

type shapeTable struct {
	ids   []ecs.ID
	count int
}

// shapeOf describes w's tables.
func shapeOf(w *ecs.World) *shape {
	s := &shape{dump: w.Unsafe().DumpEntities()}
	for i := 2; i < len(s.dump.Entities); i++ { // every slot free, linked to the next
		var link [8]byte
		binary.BigEndian.PutUint32(link[:], uint32(i+1))
		_ = s.dump.Entities[i].UnmarshalBinary(link[:])
	}
	s.dump.Next, s.dump.Available, s.dump.Alive = 2, uint32(len(s.dump.Entities)-2), nil
	q := ecs.NewUnsafeFilter(w).Query()
	var last ecs.IDs
	for q.Next() {
		ids := q.IDs()
		if len(s.tables) == 0 || !sameIDs(ids, last) {
			t := shapeTable{}
			for i := range ids.Len() {
				t.ids = append(t.ids, ids.Get(i))
			}
			s.tables = append(s.tables, t)
			last = ids
		}
		s.tables[len(s.tables)-1].count++
	}
	return s
}

// buildShape builds, in a prepared world, the tables of a shape with the Ark calls Decode makes,
// without a file: LoadEntities with a pool of free slots, then per table one entity created with
// its components and the rest copied from it. Names stay empty, so only Ark's own memory counts.
func buildShape(s *shape) *ecs.World {
	target := prepare()
	target.Unsafe().LoadEntities(&s.dump)
	for _, t := range s.tables {
		first := target.Unsafe().NewEntity(t.ids...)
		for range t.count - 1 {
			target.CopyEntity(first)
		}
	}
	return target
}

func sameIDs(a, b ecs.IDs) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if a.Get(i) != b.Get(i) {
			return false
		}
	}
	return true
}

// TestBenchWorldRoundTrips keeps the benchmark honest: both codecs restore the benchmark world.
func TestBenchWorldRoundTrips(t *testing.T) {
	w := newWorld(1000)
	var pecs bytes.Buffer
	if err := archetype.Encode(&pecs, w); err != nil {
		t.Fatal(err)
	}
	got := prepare()
	if err := archetype.Decode(&pecs, got); err != nil {
		t.Fatal(err)
	}
	a, b := ecs.NewFilter2[Health, Name](w).Query(), ecs.NewFilter2[Health, Name](got).Query()
	for a.Next() && b.Next() {
		ha, na := a.Get()
		hb, nb := b.Get()
		if a.Entity() != b.Entity() || *ha != *hb || *na != *nb {
			t.Fatalf("entity %v differs from %v", a.Entity(), b.Entity())
		}
	}
	if componentBytes(w) != 1000*32+500*8+100*16 {
		t.Errorf("component bytes %d", componentBytes(w))
	}
}
