package chunkstore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/arksave/arksave/vfs"
	"github.com/pierrec/lz4/v4"
)

// archiveCorpora are the payloads archival compression sees, as the store
// writes them (the record EncodeSmallest picks, decoded): "terrain", the
// generated chunks of internal/testkit/terrain where the surface crosses
// them and below it, as generated, dug (10% of the rows cleared) and
// scattered (5% of the pixels set to random materials); "painted", the
// player-built sky of paintedWorld (stone, brick courses, a textured
// stamp, dabs of water).
func archiveCorpora(tb testing.TB) map[string][][]byte {
	rng := rand.New(rand.NewPCG(26, 8))
	cc := &chunkCodec{npix: seedSize * seedSize, mask: ^uint32(0), threshold: DefaultDeltaThreshold}
	e := &encoder{}
	payload := func(pix []uint32) []byte {
		res, err := cc.encode(e, Key2(0, 0), pix, nil)
		if err != nil {
			tb.Fatal(err)
		}
		h, err := checkRecord(res.rec, 4096)
		if err != nil {
			tb.Fatal(err)
		}
		raw, err := payloadOf(h, res.rec, 4096, maxRecordPayload, nil)
		if err != nil {
			tb.Fatal(err)
		}
		return append([]byte(nil), raw...)
	}
	var terrainSet, painted [][]byte
	for _, y := range []int32{0, 1} {
		for x := range int32(3) {
			pix := make([]uint32, seedSize*seedSize)
			seedGen.Generate(x, y, 7, pix)
			terrainSet = append(terrainSet, payload(pix), payload(modify(pix, 0.1, false, rng)), payload(modify(pix, 0.05, true, rng)))
		}
	}
	world := paintedWorld()
	for _, p := range slices.SortedFunc(maps.Keys(world), func(a, b Pos) int { return int(a.Y-b.Y)*64 + int(a.X-b.X) }) {
		if pix := world[p]; slices.ContainsFunc(pix, func(v uint32) bool { return v != 0 }) {
			painted = append(painted, payload(pix))
		}
	}
	return map[string][][]byte{"terrain": terrainSet, "painted": painted}
}

// BenchmarkArchiveCodec compresses and decompresses the payloads of
// archiveCorpora with LZ4 (what a save writes) and with zstd at the
// default and the better level (what ZstdArchive writes), and reports per
// corpus and codec: the bytes stored, their size against LZ4's, and the
// compress and decompress speeds in MB/s of raw payload.
//
//	go test -run '^$' -bench BenchmarkArchiveCodec -benchtime 5x ./chunkstore
func BenchmarkArchiveCodec(b *testing.B) {
	corpora := archiveCorpora(b)
	var c lz4.Compressor
	lz4Size := func(raw []byte) int {
		out := make([]byte, lz4.CompressBlockBound(len(raw)))
		n, err := c.CompressBlock(raw, out)
		if err != nil || n == 0 {
			return len(raw)
		}
		return n
	}
	codecs := []struct {
		name       string
		compress   func(raw, dst []byte) []byte
		decompress func(src, dst []byte) error
	}{
		{"lz4", func(raw, dst []byte) []byte {
			dst = dst[:lz4.CompressBlockBound(len(raw))]
			n, _ := c.CompressBlock(raw, dst)
			return dst[:n]
		}, func(src, dst []byte) error {
			_, err := lz4.UncompressBlock(src, dst)
			return err
		}},
		{"zstd-default", zstdCompressor(zstdLevelDefault), zstdDecompress},
		{"zstd-better", zstdCompressor(3), zstdDecompress},
	}
	for _, name := range []string{"terrain", "painted"} {
		corpus := corpora[name]
		var raw, lz int
		for _, p := range corpus {
			raw += len(p)
			lz += lz4Size(p)
		}
		for _, codec := range codecs {
			b.Run(fmt.Sprintf("%s/%s", name, codec.name), func(b *testing.B) {
				stored := make([][]byte, len(corpus))
				dst := make([]byte, 0, 2*seedSize*seedSize*4)
				out := make([]byte, seedSize*seedSize*4)
				var ctime, dtime time.Duration
				size := 0
				b.ResetTimer()
				for range b.N {
					size = 0
					t0 := time.Now()
					for i, p := range corpus {
						stored[i] = append(stored[i][:0], codec.compress(p, dst[:0])...)
						size += len(stored[i])
					}
					t1 := time.Now()
					for i, p := range corpus {
						if err := codec.decompress(stored[i], out[:len(p)]); err != nil {
							b.Fatal(err)
						}
					}
					ctime, dtime = ctime+t1.Sub(t0), dtime+time.Since(t1)
				}
				mb := float64(raw) * float64(b.N) / 1e6
				b.ReportMetric(float64(size), "stored-B")
				b.ReportMetric(float64(size)/float64(lz), "size-vs-lz4")
				b.ReportMetric(float64(raw)/float64(size), "ratio")
				b.ReportMetric(mb/ctime.Seconds(), "compress-MB/s")
				b.ReportMetric(mb/dtime.Seconds(), "decompress-MB/s")
			})
		}
	}
}

func zstdCompressor(level int) func(raw, dst []byte) []byte {
	return func(raw, dst []byte) []byte { return zstdEncoder(level).EncodeAll(raw, dst) }
}

func zstdDecompress(src, dst []byte) error {
	return unzstd(recordHeader{kind: 2}, src, dst, 4096, recordHeaderSize)
}

// archivedStore commits n terrain chunks of size x size pixels to a new
// store, then paints over every third one twice (dead bytes), and compacts
// the whole store, with ZstdArchive or without; it returns the bytes of
// the store's files before and after.
func archivedStore(tb testing.TB, n, size int, archive bool) (before, after int64) {
	mem := vfs.NewMem()
	gen := seedGen
	gen.Surface = int32(size / 2)
	cfg := Options{ChunkSize: uint16(size), TileSize: 16, Seed: 7, Generator: gen, FS: mem, Workers: 1, DataFileSize: 1 << 20, ZstdArchive: archive}
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	for round := range 3 {
		b := s.NewBatch()
		for i := range n {
			if round > 0 && i%3 != 0 {
				continue
			}
			p := Pos{int32(i % 16), int32(i/16) - 1}
			pix := make([]uint32, size*size)
			gen.Generate(p.X, p.Y, 7, pix)
			b.PutChunk(p, modify(pix, 0.02*float64(round+1), true, rng))
		}
		if _, err := s.Commit(b); err != nil {
			tb.Fatal(err)
		}
	}
	before = s.statistics().FileSize
	if err := s.Compact(); err != nil {
		tb.Fatal(err)
	}
	if r := s.Check(); !r.OK() || archive != (r.Zstd > 0) {
		tb.Fatalf("archive %v: %d zstd records: %s", archive, r.Zstd, r)
	}
	return before, s.statistics().FileSize
}

// Compacted with ZstdArchive, a store of terrain chunks takes less room
// than compacted without.
func TestArchiveShrinksStore(t *testing.T) {
	_, lz := archivedStore(t, 48, 64, false)
	_, zs := archivedStore(t, 48, 64, true)
	if zs >= lz {
		t.Fatalf("compacted with zstd: %d bytes, without: %d", zs, lz)
	}
}

// BenchmarkArchiveStore reports the bytes on disk of a store of 48
// terrain chunks of 512x512, three generations, after a whole-store
// compaction without ZstdArchive and with it, and their ratio.
//
//	go test -run '^$' -bench BenchmarkArchiveStore -benchtime 1x ./chunkstore
func BenchmarkArchiveStore(b *testing.B) {
	var lz, zs int64
	for range b.N {
		_, lz = archivedStore(b, 48, seedSize, false)
		_, zs = archivedStore(b, 48, seedSize, true)
	}
	b.ReportMetric(float64(lz), "lz4-B")
	b.ReportMetric(float64(zs), "zstd-B")
	b.ReportMetric(float64(zs)/float64(lz), "zstd/lz4")
}
