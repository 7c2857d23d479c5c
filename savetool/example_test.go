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

	"github.com/arksave/arksave/internal/savetest"
	"github.com/arksave/arksave/savetool"
	"github.com/mlange-42/ark/ecs"
)

// exampleSave makes a save as a game would: three generations, two of them
// backups, chunks of 32 pixels.
func exampleSave() (dir string, cleanup func()) {
	dir, cleanup, err := savetest.BuildTemp()
	if err != nil {
		panic(err)
	}
	return dir, cleanup
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
	fmt.Println(len(r.Problems), "problems found")
	// Output:
	// manifest
	// 1 problems found
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
	img, st, err := savetool.RenderDir(dir, savetool.RenderOptions{Generator: savetest.Generator, Grid: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(img.Bounds().Size(), "pixels of world", st.Region)
	fmt.Printf("%d full, %d delta, %d empty, %d generated chunks, %d bodies\n", st.Full, st.Delta, st.Empty, st.Generated, st.Bodies)

	// A region of world pixels, every world pixel 4x4 image pixels.
	img, _, _ = savetool.RenderDir(dir, savetool.RenderOptions{Region: image.Rect(0, 0, 64, 32), Zoom: 4})
	fmt.Println(img.Bounds().Size())
	// Output:
	// (96,96) pixels of world (-32,-32)-(64,64)
	// 2 full, 3 delta, 1 empty, 3 generated chunks, 2 bodies
	// (256,128)
}

func ExampleCompact() {
	dir, cleanup := exampleSave()
	defer cleanup()

	r, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1})
	if err != nil {
		panic(err)
	}
	fmt.Println("generation", r.Generation, "uses", r.NewStore, "smaller:", r.After < r.Before)
	fmt.Println(r.OldStore, "kept for the backups:", r.OldKept)
	// Output:
	// generation 4 uses chunks-4.pxsw smaller: true
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
	// nothing to do: true manifest format 2
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
	fmt.Printf("%s: %d full, %d delta, %d empty, %d bodies\n", st.Name, st.Full, st.Delta, st.Empty, st.Bodies)
	// Output:
	// generation 3 current: true chunks: 6
	// generation 2 current: false chunks: 4
	// generation 1 current: false chunks: 3
	// chunks.pxsw: 2 full, 3 delta, 1 empty, 2 bodies
}

func ExampleExportJSON() {
	dir, cleanup := exampleSave()
	defer cleanup()

	var buf bytes.Buffer
	if err := savetool.ExportJSON(&buf, dir, 0, savetool.Options{}); err != nil {
		panic(err)
	}
	var out struct {
		Chunks savetool.ChunkIndex
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		panic(err)
	}
	for _, c := range out.Chunks.Chunks {
		fmt.Println(c.X, c.Y, c.Type, len(c.Bodies))
	}
	// Output:
	// -1 -1 full 0
	// 0 0 delta 0
	// 1 0 full 0
	// -1 1 empty 1
	// 0 1 delta 0
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
	game, err := savetest.Open(dir, true) // the game runs
	if err != nil {
		panic(err)
	}
	_, err = savetool.Restore(dir, 2, savetool.Options{})
	fmt.Println("restore while the game runs:", errors.Is(err, savetool.ErrInUse))
	_, err = savetool.Check(dir, savetool.Options{})
	fmt.Println("check while the game runs:", err)
	game.Close()

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
	// Output: generation 3, 2 entities, the same bytes: true
}

// An edited export goes back into the save as a new generation, which the game loads.
func ExampleImportInto() {
	dir, cleanup := exampleSave()
	defer cleanup()
	var js bytes.Buffer
	if err := savetool.ExportJSON(&js, dir, 0, savetool.Options{}); err != nil {
		panic(err)
	}
	edited := strings.Replace(js.String(), `"Points":3`, `"Points":500`, 1)
	rep, err := savetool.ImportInto(dir, strings.NewReader(edited), savetool.ImportOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("generation %d committed; %d is a backup now\n", rep.Generation, rep.Previous)

	game, err := savetest.Open(dir, true)
	if err != nil {
		panic(err)
	}
	defer game.Close()
	fmt.Println("points:", ecs.GetResource[savetest.Score](game.W).Points)
	// Output:
	// generation 4 committed; 3 is a backup now
	// points: 500
}
