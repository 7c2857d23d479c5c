package chunkstore

import (
	"bytes"
	"testing"

	"github.com/arksave/arksave/vfs"
)

// BenchmarkCommitKey measures what Options.Key costs a commit: five
// 512x512 chunks (terrain, terrain with changes, sparse, random) written
// without a key and with one, through the whole commit (encode, compress,
// encrypt, append, sync) into memory, the dictionary off (it shares no
// encrypted record; each commit writes the same chunks at new positions,
// which it would share without a key). The ratio of the two is the cost
// of encryption:
//
//	go test ./chunkstore -run '^$' -bench 'CommitKey' -benchtime 20x -count 5
func BenchmarkCommitKey(b *testing.B) {
	chunks := make([][]uint32, 0, 5)
	for _, p := range patterns() {
		switch p.name {
		case "Sparse 5%", "Terrain", "Sparse 25%", "Random":
			chunks = append(chunks, p.pix)
		}
	}
	painted := terrainChunk()
	for i := 0; i < len(painted); i += 97 {
		painted[i] = 0x0a0b0c0d
	}
	chunks = append(chunks, painted)
	for _, c := range []struct {
		name string
		key  []byte
	}{{"plain", nil}, {"key", bytes.Repeat([]byte{7}, 32)}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := Create("/w.pxsw", &Options{FS: vfs.NewMem(), ChunkSize: seedSize, TileSize: 32, PixelSize: 4, Workers: 1, Dictionary: DictionaryOff, Key: c.key})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var bytes int64
			b.ResetTimer()
			for i := range b.N {
				batch := s.NewBatch()
				for j, pix := range chunks {
					batch.PutChunk(Pos{X: int32(j), Y: int32(i)}, pix)
				}
				st, err := s.Commit(batch)
				if err != nil {
					b.Fatal(err)
				}
				bytes += st.RecordBytes
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "B/commit")
		})
	}
}

// BenchmarkEncryptRecord measures encryptRecord and decryptRecord alone
// on a terrain chunk's record (LZ4-compressed), in bytes a second: what
// the key adds to each record a commit writes and a read opens.
func BenchmarkEncryptRecord(b *testing.B) {
	aead, err := recordCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	e := &encoder{}
	raw := make([]byte, 4*seedSize*seedSize)
	putPixels(raw, terrainChunk(), ^uint32(0))
	rec := bytes.Clone(e.seal(recordKind(Full), Key2(1, 0), raw))
	b.Run("encrypt", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for range b.N {
			if _, err := encryptRecord(aead, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	enc, _ := encryptRecord(aead, rec)
	h, err := checkRecord(enc, 4096)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decrypt", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		var dst []byte
		for range b.N {
			var err error
			if _, dst, err = decryptRecord(aead, h, enc, 4096, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}
