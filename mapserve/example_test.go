package mapserve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/mapserve"
)

// hills is the game's chunk generator: chunks of 32x32 pixels, stone
// (material 1) below world row 20, air above.
type hills struct{}

func (hills) Version() uint32 { return 1 }
func (hills) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = 0
		if int(y)*32+i/32 >= 20 {
			dst[i] = uint32(components.MakePixel(1, uint8(i%7), 0, 0))
		}
	}
}

// A game saves while its save is served: the map follows the new
// generation. A game serves its saves with its own generator (unstored
// chunks drawn as generated) and colours.
func Example() {
	tmp, _ := os.MkdirTemp("", "mapserve-example-")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "save")

	// The game: a world with the plugin, 3x3 chunks around the player.
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: 32, TileSize: 8, Seed: 7, Generator: hills{}}.Install(w)
	if err != nil {
		panic(err)
	}
	pers := ecs.GetResource[arksave.Persistence](w)
	defer pers.Close()
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 1})
	for ecs.GetResource[components.ChunkIndex](w).Len() < 9 {
		for _, s := range systems {
			s.Update(w)
		}
	}
	dig := func(x, y int32) { // digs a pixel of chunk (x, y) out to air and saves
		e, _ := ecs.GetResource[components.ChunkIndex](w).Get(components.ChunkPos{X: x, Y: y})
		_, c, st := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w).Get(e)
		if c.Set(5, 5, 0) {
			st.MarkDirty()
		}
		if res := pers.SaveNow(); res.Err != nil {
			panic(res.Err)
		}
	}
	dig(0, 1)

	// The map, served while the game runs.
	m, err := mapserve.New(dir, mapserve.Options{Generator: hills{}, Poll: -1})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	ts := httptest.NewServer(m)
	defer ts.Close()

	var world struct {
		Generation uint64
		Chunks     []struct{ Kind string }
	}
	res, _ := http.Get(ts.URL + "/api/world")
	json.NewDecoder(res.Body).Decode(&world)
	res.Body.Close()
	fmt.Println("generation", world.Generation, "stores", world.Chunks)

	res, _ = http.Get(ts.URL + "/api/tiles/0/0/0.png")
	res.Body.Close()
	fmt.Println(res.Status, res.Header.Get("Content-Type"))

	dig(1, 1)
	moved, err := m.Refresh() // what the server does every Options.Poll
	fmt.Println("moved on:", moved, err, "to generation", m.Generation())
	// Output:
	// generation 1 stores [{delta}]
	// 200 OK image/png
	// moved on: true <nil> to generation 2
}

// A game whose regional entities keep their position in fields the map
// would not guess tells it where they stand. The map hands Options.Position
// each entity's components as the JSON export shows them, by full type
// name.
func ExamplePositionFields() {
	place := mapserve.PositionFields("example.com/game.Crate", "PosX", "PosY")
	x, y, ok := place(mapserve.Components{
		"example.com/game.Crate":                         json.RawMessage(`{"PosX":12.5,"PosY":-3,"Label":"rope"}`),
		"github.com/arksave/arksave/components.Regional": json.RawMessage(`{"ID":101}`),
	})
	fmt.Println(x, y, ok)
	_, _, ok = place(mapserve.Components{"example.com/game.Barrel": json.RawMessage(`{"PosX":1,"PosY":2}`)})
	fmt.Println("a barrel:", ok) // the map guesses, or draws it at its chunk's centre

	o := mapserve.Options{Position: place} // for mapserve.New
	fmt.Println(o.Position != nil)
	// Output:
	// 12.5 -3 true
	// a barrel: false
	// true
}
