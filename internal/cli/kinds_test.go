package cli

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	plugin "github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// inspect and check count the chunks of a store by record kind, palette
// chunks included.
func TestInspectAndCheckCountKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chunks.pxsw")
	g := terrain.Generator{Surface: 16}
	s, err := chunkstore.Create(path, &chunkstore.Options{ChunkSize: 32, TileSize: 8, Seed: 7, Generator: g})
	must(t, err)
	b := s.NewBatch()
	for i := range 3 { // painted with two colours: palette records
		pix := make([]uint32, 32*32)
		for j := range pix {
			pix[j] = 0x0107 + uint32((j/5+i)%2)<<8
		}
		b.PutChunk(chunkstore.Pos{X: int32(i), Y: 4}, pix)
	}
	gen := make([]uint32, 32*32)
	g.Generate(0, 0, 7, gen)
	gen[100] = 0x0304
	b.PutChunkExtra(chunkstore.Pos{}, gen, []byte("heightmap")) // one pixel changed: a delta, with extra data
	st, err := s.Commit(b)
	must(t, err)
	must(t, s.Close())
	if st.Palette != 3 || st.Delta != 1 {
		t.Fatalf("commit %+v", st)
	}

	code, stdout, stderr := arksave("inspect", path)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "4 stored: 0 full, 1 delta, 0 empty, 3 palette")
	code, stdout, stderr = arksave("check", path)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "chunk store entries: 1 delta, 3 palette")
	code, stdout, stderr = arksave("check", "--json", path)
	expectCode(t, 0, code, stderr)
	var out struct {
		Types map[string]int `json:"entries_by_type"`
	}
	must(t, json.Unmarshal([]byte(stdout), &out))
	if out.Types["palette"] != 3 || out.Types["delta"] != 1 {
		t.Errorf("check --json: %s", stdout)
	}
}

// export --json names palette chunks with their palette size and counts
// the bytes of a chunk's extra data.
func TestExportPaletteAndExtra(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	w := ecs.NewWorld()
	systems, err := plugin.Plugin{Dir: dir, ChunkSize: 32, TileSize: 8, Generator: terrain.Generator{Surface: 16}}.Install(w)
	must(t, err)
	p := ecs.GetResource[plugin.Persistence](w)
	defer p.Close()
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 0})
	home := components.ChunkPos{}
	ix := ecs.GetResource[components.ChunkIndex](w)
	for range 5000 {
		if _, ok := ix.Get(home); ok {
			break
		}
		for _, s := range systems {
			s.Update(w)
		}
		time.Sleep(time.Millisecond)
	}
	e, ok := ix.Get(home)
	if !ok {
		t.Fatal("chunk not loaded")
	}
	c := ecs.NewMap1[components.Chunk](w).Get(e)
	pix := c.MutRect(0, 0, c.Size, c.Size)
	for i := range pix {
		pix[i] = components.MakePixel(7, uint8(i/100%3), 0, 0) // painted: a palette record
	}
	must(t, p.SetChunkData(home, []byte("heightmap"))) // marks the chunk dirty
	must(t, p.SaveNow().Err)

	code, stdout, stderr := arksave("export", "--json", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, `"type": "palette"`, `"palette": 4`, `"extra": 9`) // air at index 0, then the three colours
}
