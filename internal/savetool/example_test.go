package savetool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
)

// exampleGen is the game's chunk generator: chunks of 32x32 pixels, stone
// (material 2) below world row 24, air above.
type exampleGen struct{}

func (exampleGen) Version() uint32 { return 1 }
func (exampleGen) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		if int(y)*32+i/32 >= 24 {
			dst[i] = uint32(components.MakePixel(2, uint8(i%3), 0, 0))
		} else {
			dst[i] = 0
		}
	}
}

// exampleGame is a game with the plugin: a world, its systems, its
// Persistence.
type exampleGame struct {
	w       *ecs.World
	systems []arksave.System
	p       *arksave.Persistence
}

// openGame installs the plugin over dir, continuing its save when load is
// set, and ticks until the 3x3 chunks around the player are loaded.
func openGame(dir string, load bool) (*exampleGame, error) {
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{
		Dir: dir, Load: load, ChunkSize: 32, TileSize: 8, Seed: 7, Generator: exampleGen{},
		Autosave: &autosave.Config{MaxBackups: 2},
	}.Install(w)
	if err != nil {
		return nil, err
	}
	if !load {
		ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{X: 1, Radius: 1})
	}
	g := &exampleGame{w: w, systems: systems, p: ecs.GetResource[arksave.Persistence](w)}
	for ecs.GetResource[components.ChunkIndex](w).Len() < 9 {
		for _, s := range systems {
			s.Update(w)
		}
	}
	return g, nil
}

// paint sets pixel (px, py) of loaded chunk (x, y), marking it dirty.
func (g *exampleGame) paint(x, y int32, px, py int, p components.Pixel) {
	e, _ := ecs.GetResource[components.ChunkIndex](g.w).Get(components.ChunkPos{X: x, Y: y})
	_, c, st := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](g.w).Get(e)
	if c.Set(px, py, p) {
		st.MarkDirty()
	}
}

// body drops a 3x3 pixel body of material mat at (x, y).
func (g *exampleGame) body(x, y float32, mat uint8) {
	b := components.PixelBody{ID: ecs.GetResource[components.BodyIDs](g.w).New(), X: x, Y: y, Width: 3, Height: 3, OriginX: 1, OriginY: 1}
	for range 9 {
		b.Pixels = append(b.Pixels, components.MakePixel(mat, 0, 0, components.FlagPixelBody))
		b.Shape = append(b.Shape, true)
	}
	ecs.NewMap2[components.PixelBody, components.Persistable](g.w).NewEntity(&b, &components.Persistable{})
}

// exampleSave makes a save as a game would: three generations, two of them
// backups; chunks stored as deltas against the generator, in full and as
// empty; two pixel bodies.
func exampleSave() (dir string, cleanup func()) {
	tmp, err := os.MkdirTemp("", "savetool-example-")
	if err != nil {
		panic(err)
	}
	dir = filepath.Join(tmp, "save")
	g, err := openGame(dir, false)
	if err != nil {
		panic(err)
	}
	defer g.p.Close()
	for gen := 1; gen <= 3; gen++ {
		switch gen {
		case 1:
			for i := range 40 { // water in the sky: a delta
				g.paint(0, 0, i%32, 5+i/32, components.MakePixel(4, 0, 0, 0))
			}
			for i := range 32 * 32 { // a chunk all changed: full
				g.paint(1, 0, i%32, i/32, components.MakePixel(uint8(1+i%9), uint8(i), 0, 0))
			}
			for i := range 32 * 32 { // a chunk dug out to air: empty
				g.paint(-1, 1, i%32, i/32, 0)
			}
			g.body(40, 40, 3)
		case 2:
			for i := range 30 {
				g.paint(0, 1, 3+i%20, 2+i/20, components.MakePixel(3, 2, 0, 0))
			}
			g.body(-20, 50, 5)
		case 3:
			for i := range 32 * 32 {
				g.paint(-1, -1, i%32, i/32, components.MakePixel(uint8(1+i%5), 0, 0, 0))
			}
			for i := range 12 {
				g.paint(1, 1, 2*i, 9, components.MakePixel(4, 1, 0, 0))
			}
		}
		if res := g.p.SaveNow(); res.Err != nil {
			panic(res.Err)
		}
	}
	return dir, func() { os.RemoveAll(tmp) }
}

func ExampleCheck() {
	dir, cleanup := exampleSave()
	defer cleanup()
	os.Remove(filepath.Join(dir, "manifest"))

	r, err := savetool.Check(dir, savetool.Options{})
	if err != nil {
		panic(err)
	}
	for _, p := range r.Problems {
		fmt.Println(p.File)
	}
	fmt.Println(len(r.Problems), "problem found")
	// Output:
	// manifest
	// 1 problem found
}

func ExampleRepair() {
	dir, cleanup := exampleSave()
	defer cleanup()
	os.Remove(filepath.Join(dir, "manifest"))

	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("manifest:", rep.Manifest)
	fmt.Println("world:", rep.World.File)
	fmt.Printf("kept: %d chunks, %d bodies\n", rep.Kept.Chunks, rep.Kept.Bodies)
	fmt.Println("committed generation", rep.Generation, "checks clean:", rep.After.OK())
	// Output:
	// manifest: rebuilt: it was missing
	// world: world-3.pecs
	// kept: 6 chunks, 2 bodies
	// committed generation 4 checks clean: true
}

func ExampleRenderDir() {
	dir, cleanup := exampleSave()
	defer cleanup()

	// With the game's generator, unstored chunks are drawn as generated.
	img, st, err := savetool.RenderDir(dir, savetool.RenderOptions{Generator: exampleGen{}, Grid: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(img.Bounds().Size(), "pixels of world", st.Region)
	fmt.Printf("%d full, %d palette, %d delta, %d empty, %d generated chunks, %d bodies\n", st.Full, st.Palette, st.Delta, st.Empty, st.Generated, st.Bodies)

	// A region of world pixels, every world pixel 4x4 image pixels.
	img, _, _ = savetool.RenderDir(dir, savetool.RenderOptions{Region: image.Rect(0, 0, 64, 32), Zoom: 4})
	fmt.Println(img.Bounds().Size())
	// Output:
	// (96,96) pixels of world (-32,-32)-(64,64)
	// 4 full, 0 palette, 1 delta, 1 empty, 3 generated chunks, 2 bodies
	// (256,128)
}

func ExampleCompact() {
	dir, cleanup := exampleSave()
	defer cleanup()

	// Data file by data file, within the store.
	r, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1})
	if err != nil {
		panic(err)
	}
	fmt.Println("generation", r.Generation, "uses", r.NewStore, "dead bytes:", r.DeadAfter)
	// Whole, into a new store.
	r, err = savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("generation", r.Generation, "uses", r.NewStore, "dead bytes:", r.DeadAfter)
	fmt.Println(r.OldStore, "kept for the backups:", r.OldKept)
	// Output:
	// generation 4 uses chunks.pxsw dead bytes: 0
	// generation 5 uses chunks-5.pxsw dead bytes: 0
	// chunks.pxsw kept for the backups: true
}

func ExampleMigrate() {
	dir, cleanup := exampleSave()
	defer cleanup()

	r, err := savetool.Migrate(dir, savetool.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("nothing to do:", r.NothingToDo, "manifest format", r.CurrentManifest)
	// Output:
	// nothing to do: true manifest format 3
}

func ExampleInspectDir() {
	dir, cleanup := exampleSave()
	defer cleanup()

	info, err := savetool.InspectDir(dir, savetool.Options{})
	if err != nil {
		panic(err)
	}
	for _, g := range info.Generations {
		fmt.Println("generation", g.Generation, "current:", g.Current, "chunks:", g.Chunks)
	}
	st := info.Stores[0]
	fmt.Printf("%s: %d full, %d palette, %d delta, %d empty, %d bodies\n", st.Name, st.Full, st.Palette, st.Delta, st.Empty, st.Bodies)
	// Output:
	// generation 3 current: true chunks: 6
	// generation 2 current: false chunks: 4
	// generation 1 current: false chunks: 3
	// chunks.pxsw: 4 full, 0 palette, 1 delta, 1 empty, 2 bodies
}

func ExampleExportJSON() {
	dir, cleanup := exampleSave()
	defer cleanup()

	var buf bytes.Buffer
	if err := savetool.ExportJSON(&buf, dir, 0, savetool.Options{}); err != nil {
		panic(err)
	}
	var out struct {
		Chunks savetool.StoredChunks
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		panic(err)
	}
	for _, c := range out.Chunks.Chunks {
		fmt.Println(c.X, c.Y, c.Type, len(c.Bodies))
	}
	// Output:
	// -1 -1 full 0
	// 0 0 full 0
	// 1 0 full 0
	// -1 1 empty 1
	// 0 1 full 0
	// 1 1 delta 1
}

func ExampleDefaultPalette() {
	p := savetool.DefaultPalette()
	fmt.Println(p.Color(0))          // air
	fmt.Println(p.Color(4))          // sand, darkest shade
	fmt.Println(p.Color(4 | 255<<8)) // sand, lightest shade
	// Output:
	// {156 200 236 255}
	// {201 164 92 255}
	// {240 214 140 255}
}

// While a game holds the save directory, commands that change it refuse,
// naming the game; reading commands work.
func ExampleRestore() {
	dir, cleanup := exampleSave()
	defer cleanup()
	game, err := openGame(dir, true) // the game runs
	if err != nil {
		panic(err)
	}
	_, err = savetool.Restore(dir, 2, savetool.Options{})
	fmt.Println("restore while the game runs:", errors.Is(err, savetool.ErrInUse))
	_, err = savetool.Check(dir, savetool.Options{})
	fmt.Println("check while the game runs:", err)
	game.p.Close()

	r, err := savetool.Restore(dir, 2, savetool.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("restored generation %d as %d; %d is a backup now\n", r.Restored, r.Generation, r.Previous)
	// Output:
	// restore while the game runs: true
	// check while the game runs: <nil>
	// restored generation 2 as 4; 3 is a backup now
}

// A save directory's JSON export turns back into its world file, byte for byte.
func ExampleImportJSON() {
	dir, cleanup := exampleSave()
	defer cleanup()
	var js, world bytes.Buffer
	if err := savetool.ExportJSON(&js, dir, 0, savetool.Options{}); err != nil {
		panic(err)
	}
	rep, err := savetool.ImportJSON(&world, &js)
	if err != nil {
		panic(err)
	}
	file, _ := os.ReadFile(filepath.Join(dir, "world-3.pecs"))
	fmt.Printf("generation %d, %d entities, the same bytes: %v\n", rep.From, rep.Entities, bytes.Equal(world.Bytes(), file))
	// Output: generation 3, 1 entities, the same bytes: true
}

// An edited export goes back into the save as a new generation, which the game loads.
func ExampleImportInto() {
	dir, cleanup := exampleSave()
	defer cleanup()
	var js bytes.Buffer
	if err := savetool.ExportJSON(&js, dir, 0, savetool.Options{}); err != nil {
		panic(err)
	}
	// The player's view reaches two chunks further: edit the Focus component.
	edited := strings.Replace(js.String(), `"Radius":1`, `"Radius":3`, 1)
	rep, err := savetool.ImportInto(dir, strings.NewReader(edited), savetool.ImportOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("generation %d committed; %d is a backup now\n", rep.Generation, rep.Previous)

	game, err := openGame(dir, true)
	if err != nil {
		panic(err)
	}
	defer game.p.Close()
	q := ecs.NewFilter1[components.Focus](game.w).Query()
	for q.Next() {
		fmt.Println("radius:", q.Get().Radius)
	}
	// Output:
	// generation 4 committed; 3 is a backup now
	// radius: 3
}

func ExampleOpenStore() {
	dir, cleanup := exampleSave()
	defer cleanup()
	game, err := openGame(dir, true) // the game runs
	if err != nil {
		panic(err)
	}
	defer game.p.Close()

	s, m, err := savetool.OpenStore(dir, 0, savetool.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	kinds := map[string]int{}
	s.Entries(func(e chunkstore.Entry) bool {
		kinds[e.Type.String()]++
		return true
	})
	fmt.Println("generation", m.Generation, "stores", kinds)
	bodies, _ := s.Bodies(chunkstore.Pos{X: 1, Y: 1})
	fmt.Printf("%+v\n", savetool.NewBodyEntry(&bodies[0]))
	// Output:
	// generation 3 stores map[bodies:2 delta:1 empty:1 full:4]
	// {ID:4294967297 X:40 Y:40 Rotation:0 VX:0 VY:0 AngularVelocity:0 Width:3 Height:3 OriginX:1 OriginY:1 Pixels:9 Extension:0}
}

func ExampleDrawBody() {
	b := chunkstore.Body{X: 5, Y: 2, Width: 3, Height: 2, OriginX: 1, OriginY: 1,
		Pixels: make([]uint32, 6), Shape: []bool{true, true, true, false, true, false}}
	for i := range b.Pixels {
		b.Pixels[i] = 1 // stone
	}
	region := image.Rect(0, 0, 8, 4)
	img := image.NewRGBA(image.Rect(0, 0, region.Dx(), region.Dy()))
	savetool.DrawBody(img, region, 1, &b, nil)
	for y := range region.Dy() {
		for x := range region.Dx() {
			if img.RGBAAt(x, y).A != 0 {
				fmt.Print("#")
			} else {
				fmt.Print(".")
			}
		}
		fmt.Println()
	}
	fmt.Println(savetool.BodyBounds(&b))
	// Output:
	// ........
	// ....###.
	// .....#..
	// ........
	// (1,-2)-(10,7)
}

func ExampleCheckReport_JSON() {
	dir, cleanup := exampleSave()
	defer cleanup()
	r, err := savetool.Check(dir, savetool.Options{})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(r.JSON("save"))
	fmt.Println(string(out))
	// Output:
	// {"path":"save","ok":true,"generation":3,"problems":[],"backups_checked":2,"store_generations_checked":3,"world_files_checked":3,"mirrors_checked":2,"entries_by_type":{"bodies":1,"empty":1,"full":2}}
}
