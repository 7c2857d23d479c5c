package bench

import (
	"bytes"
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

// report adds the figures docs/benchmarks.md quotes: microseconds per 1,000 entities and, where a file
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
		pecs, js := files(b, w)

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
			buf.Grow(len(pecs))
			b.SetBytes(int64(len(pecs)))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := archetype.Encode(&buf, w); err != nil {
					b.Fatal(err)
				}
			}
			report(b, n, len(pecs))
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
			data := pecs
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

// files returns the world's file in both codecs: arksave's and ark-serde's.
func files(b *testing.B, w *ecs.World) (pecs, js []byte) {
	pecs, err := archetype.AppendEncode(nil, w)
	if err != nil {
		b.Fatal(err)
	}
	if js, err = arkserde.Serialize(w); err != nil {
		b.Fatal(err)
	}
	return pecs, js
}

// BenchmarkMemory reports how much memory Encode and Decode need beyond the world itself,
// relative to the world's component bytes (the size of all its component columns).
//
// Method: the garbage collector runs before and after one call. The extra memory of a call is
// what it allocated minus what is still live after it: for Encode (writing to io.Discard) every
// allocated byte, for Decode (reading from a byte slice) everything except the new world. The
// bytes allocated during a call bound from above the most it holds at any instant, so these
// ratios are upper bounds of the peak. For Decode they include the arrays Ark's tables leave
// behind when they grow: arksave sizes each table once from the file's counts, ark-serde adds
// entities one at a time and the tables double their capacity as they fill.
func BenchmarkMemory(b *testing.B) {
	const n = 100_000
	w := newWorld(n)
	comp := float64(componentBytes(w))
	pecs, js := files(b, w)
	run := func(b *testing.B, call func() any) {
		var extra float64
		for b.Loop() {
			extra = max(extra, extraBytes(call))
		}
		b.ReportMetric(comp, "comp-bytes")
		b.ReportMetric(extra/comp, "peak-extra/comp-bytes")
	}
	b.Run("Encode_PECS_100k", func(b *testing.B) {
		run(b, func() any {
			if err := archetype.Encode(io.Discard, w); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	})
	b.Run("Encode_ArkSerde_100k", func(b *testing.B) {
		run(b, func() any {
			if _, err := arkserde.Serialize(w); err != nil {
				b.Fatal(err)
			}
			return nil
		})
	})
	b.Run("Decode_PECS_100k", func(b *testing.B) {
		run(b, func() any {
			target := prepare()
			if err := archetype.Decode(bytes.NewReader(pecs), target); err != nil {
				b.Fatal(err)
			}
			return target
		})
	})
	b.Run("Decode_ArkSerde_100k", func(b *testing.B) {
		run(b, func() any {
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
