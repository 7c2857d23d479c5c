package savetest

import (
	"bytes"
	"math"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// BuildLarge makes a save of n chunks of size pixels in dir without running
// the game, for benchmarks of the tools: terrain from Generator, every
// chunk changed (three in four as deltas of about 3% of their pixels, one
// in four turned to sand whole, stored Full), a pixel body in every tenth,
// committed 64 chunks a generation (MaxBackups kept) with an empty ECS
// world.
func BuildLarge(dir string, n, size int) error {
	d, err := savedir.OpenDir(nil, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	store, err := d.File(savedir.ChunksName)
	if err != nil {
		return err
	}
	s, err := chunkstore.Create(store, &chunkstore.Options{
		ChunkSize: uint16(size), TileSize: TileSize, Seed: Seed, Generator: Generator,
	})
	if err != nil {
		return err
	}
	defer s.Close()
	var world bytes.Buffer
	if err := archetype.Encode(&world, ecs.NewWorld()); err != nil {
		return err
	}
	side := int(math.Ceil(math.Sqrt(float64(n))))
	pix := make([]uint32, size*size)
	b := s.NewBatch()
	for i := range n {
		p := chunkstore.Pos{X: int32(i%side - side/2), Y: int32(i/side - side/2)}
		Generator.Generate(p.X, p.Y, Seed, pix)
		h := uint32(i) * 2654435761
		for j := range pix {
			h ^= h << 13
			h ^= h >> 17
			h ^= h << 5
			switch {
			case i%4 == 3:
				pix[j] = terrain.Sand | (h&3)<<8
			case h%32 == 0:
				pix[j] = terrain.Water | (h>>8&3)<<8
			}
		}
		b.PutChunk(p, append([]uint32(nil), pix...))
		if i%10 == 0 {
			body := chunkstore.Body{ID: uint64(i + 1), X: float32(int(p.X)*size + size/2), Y: float32(int(p.Y)*size + size/2),
				Width: 16, Height: 16, OriginX: 8, OriginY: 8}
			for k := range 256 {
				body.Pixels = append(body.Pixels, terrain.Stone|uint32(k%4)<<8)
				body.Shape = append(body.Shape, k%5 != 0)
			}
			b.PutEntities(p, chunkstore.EntityBlock{Bodies: []chunkstore.Body{body}})
		}
		if b.Len() >= 64 || i == n-1 {
			if _, err := s.Commit(b); err != nil {
				return err
			}
			if _, _, err := d.Commit(savedir.Commit{World: world.Bytes(), MaxBackups: MaxBackups,
				Chunks: savedir.StoreRef{Name: savedir.ChunksName, Generation: s.Generation(), Root: s.Root(), Data: storetool.Tool.DataFileNames(s)}}); err != nil {
				return err
			}
			b = s.NewBatch()
		}
	}
	return nil
}
