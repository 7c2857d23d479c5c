package arksave_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// hills is the game's chunk generator: what a chunk looks like before
// anyone changes it (stone below a wavy surface, air above). A save stores
// only what differs from it.
type hills struct{}

func (hills) Version() uint32 { return 1 }
func (hills) Generate(x, y int32, seed uint64, dst []uint32) {
	size := 1
	for size*size < len(dst) {
		size++
	}
	for i := range dst {
		wx, wy := int(x)*size+i%size, int(y)*size+i/size
		if wy > 8+(wx/16)%4 {
			dst[i] = uint32(components.MakePixel(2, 0, 0, 0)) // stone
		} else {
			dst[i] = 0 // air
		}
	}
}

// Adding arksave to a game: Install, then run the systems every tick after
// the game's own; Save whenever the game wants, and Close at the end.
func Example() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()

	systems, err := arksave.Plugin{Dir: filepath.Join(dir, "world1"), Generator: hills{}}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	handle := persistence.Save()
	for !handle.IsComplete() { // the game loop: one tick after another
		for _, s := range systems {
			s.Update(world)
		}
	}
	fmt.Println("saved generation", persistence.Generation(), "error:", handle.Err())
	// Output: saved generation 1 error: <nil>
}

// loop runs systems as a game loop does: Initialize once, Update every
// tick, Finalize at the end, over every system in order. (Under ark-tools'
// app.App the plugin's systems are added with AddSystem: see the arktools
// module's Example.)
type loop struct {
	world   *ecs.World
	systems []arksave.System
}

func (s *loop) run(ticks int) {
	for _, sys := range s.systems {
		sys.Initialize(s.world)
	}
	for range ticks {
		for _, sys := range s.systems {
			sys.Update(s.world)
		}
	}
	for _, sys := range s.systems {
		sys.Finalize(s.world)
	}
}

// painter stands for a game's own system: it pours water (material 4)
// into the chunk at the origin once it is loaded, marking it dirty.
type painter struct{ painted bool }

func (g *painter) Initialize(w *ecs.World) {}
func (g *painter) Finalize(w *ecs.World)   {}
func (g *painter) Update(w *ecs.World) {
	e, ok := ecs.GetResource[components.ChunkIndex](w).Get(components.ChunkPos{})
	if !ok || g.painted {
		return
	}
	_, chunk, state := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w).Get(e)
	if chunk.Set(5, 5, components.MakePixel(4, 0, 0, 0)) {
		state.MarkDirty()
	}
	g.painted = true
}

// The plugin's systems in a game loop, after the game's own; chunks stream
// in around a Focus and autosave runs on game time (here every 30 ticks of
// 1/60 s).
func Example_autosave() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	ecs.NewMap1[components.Focus](world).NewEntity(&components.Focus{X: 100, Y: 100, Radius: 1})

	plugin := arksave.Plugin{
		Dir: dir, ChunkSize: 64, Generator: hills{},
		Autosave: &autosave.Config{Interval: 30 * arksave.DefaultTickDuration, Enabled: true},
	}
	systems, err := plugin.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	game := &painter{}
	app := &loop{world: world, systems: append([]arksave.System{game}, systems...)}
	state := ecs.GetResource[autosave.State](world)
	// A real game ticks 60 times a second; this one ticks as fast as it can
	// until the painted chunk is in a committed autosave.
	for !(game.painted && state.Saves >= 2 && persistence.DirtyChunks() == 0) {
		app.run(1)
	}
	fmt.Println("last autosave:", state.LastResult.Err == nil, "generation >= 2:", persistence.Generation() >= 2)
	// Output: last autosave: true generation >= 2: true
}

// exampleScore is a game resource that a save carries.
type exampleScore struct{ Points int }

// An Ebiten game calls the systems from its Update; Load replaces the world
// with a save, keeping the resource pointers the game holds.
func ExamplePersistence_Load() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	score := &exampleScore{Points: 10}
	ecs.AddResource(world, score)
	systems, _ := arksave.Plugin{Dir: dir, ChunkSize: 64}.Install(world)
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	update := func() error { // the body of an ebiten.Game's Update
		for _, s := range systems {
			s.Update(world)
		}
		return nil
	}
	h := persistence.Save()
	for !h.IsComplete() {
		update()
	}
	score.Points = 99
	if err := persistence.Load(dir); err != nil { // F9
		fmt.Println(err)
		return
	}
	fmt.Println("points after load:", score.Points)
	// Output: points after load: 10
}

// Save As: a complete save into another directory, where the game then
// saves; the old directory keeps its last save.
func ExamplePersistence_SaveAs() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	_, err := arksave.Plugin{Dir: filepath.Join(dir, "slot1"), ChunkSize: 64}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	h := persistence.SaveAs(filepath.Join(dir, "slot2"))
	if err := h.Wait().Err; err != nil { // between ticks: finishes the save here
		fmt.Println(err)
		return
	}
	fmt.Println("now saving to", filepath.Base(persistence.Dir()), "generation", persistence.Generation())
	// Output: now saving to slot2 generation 1
}

// SaveHandle.Wait, called on the game loop between ticks, finishes the save
// there and returns its error: it never waits for a tick. Another goroutine
// waits on Done instead.
func ExampleSaveHandle_Wait() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	if _, err := (arksave.Plugin{Dir: dir, ChunkSize: 64}).Install(world); err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	h := persistence.Save()
	err := h.Wait().Err // no tick ran: Wait takes the snapshot and waits for the commit
	fmt.Println("error:", err, "generation:", persistence.Generation())
	// Output: error: <nil> generation: 1
}

// A game offers "continue" only when there is a save: Load on a directory
// without one is ErrNoSave, and nothing is created there.
func ExamplePlugin_Install_continueOrNew() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	save := filepath.Join(dir, "world1")

	world := ecs.NewWorld()
	_, err := arksave.Plugin{Dir: save, Load: true}.Install(world)
	if errors.Is(err, arksave.ErrNoSave) {
		fmt.Println("no save: a new game")
		_, err = arksave.Plugin{Dir: save}.Install(world)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	ecs.GetResource[arksave.Persistence](world).Close()
	// Output: no save: a new game
}

// One world, one owner: a second Install on the same directory, here or in
// another process, fails with ErrLocked naming the holder, until the first
// closes. Load on a directory without a save is ErrNoSave; LoadOrCreate
// starts a new world there.
func ExamplePlugin_Install_oneOwner() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	save := filepath.Join(dir, "world1")

	_, err := arksave.Plugin{Dir: save, Load: true}.Install(ecs.NewWorld())
	fmt.Println("load of nothing:", errors.Is(err, arksave.ErrNoSave))

	first := ecs.NewWorld()
	if _, err := (arksave.Plugin{Dir: save, LoadOrCreate: true}).Install(first); err != nil {
		fmt.Println(err)
		return
	}
	_, err = arksave.Plugin{Dir: save, LoadOrCreate: true}.Install(ecs.NewWorld())
	fmt.Println("second owner:", errors.Is(err, arksave.ErrLocked))

	ecs.GetResource[arksave.Persistence](first).Close()
	second := ecs.NewWorld()
	_, err = arksave.Plugin{Dir: save, LoadOrCreate: true}.Install(second)
	fmt.Println("after the first closed:", err)
	ecs.GetResource[arksave.Persistence](second).Close()
	// Output:
	// load of nothing: true
	// second owner: true
	// after the first closed: <nil>
}

// A game run by a scheduler ends with a final save when SaveOnFinalize is
// set: the save system's Finalize saves and waits for the commit.
func ExamplePlugin_saveOnFinalize() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: 64, SaveOnFinalize: true}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	(&loop{world: world, systems: systems}).run(10) // Initialize, 10 ticks, Finalize
	fmt.Println("generation after the run:", persistence.Generation())
	// Output: generation after the run: 1
}

// Crate and Pos are a game's own components: a regional entity can have
// any.
type (
	Pos       struct{ X, Y float64 }
	CrateInfo struct{ Contents []string }
)

// A regional entity lives in the chunk it stands in: it unloads with it
// (despawned, its data kept for the next save) and comes back with it,
// with the same stable id and every component, in a new ecs.Entity.
func ExamplePosition() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	ecs.ComponentID[Pos](world)
	ecs.ComponentID[CrateInfo](world)
	systems, err := arksave.Plugin{
		Dir: filepath.Join(dir, "world1"), ChunkSize: 64, Generator: hills{},
		Positions: []arksave.RegionalPosition{arksave.Position(func(p *Pos) (float64, float64) { return p.X, p.Y })},
	}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()
	// The game loop, until the chunks around the camera are in (they load
	// on a goroutine of their own).
	chunks := ecs.GetResource[components.ChunkIndex](world)
	tick := func() {
		for _, s := range systems {
			s.Update(world)
		}
	}
	tickUntil := func(done func() bool) {
		for i := 0; i < 5000 && !done(); i++ {
			tick()
			time.Sleep(100 * time.Microsecond)
		}
	}
	loaded := func(x int32) func() bool {
		return func() bool {
			_, ok := chunks.Get(components.ChunkPos{X: x})
			return ok && chunks.Len() == 9
		}
	}
	camera := ecs.NewMap1[components.Focus](world).NewEntity(&components.Focus{Radius: 1})
	tickUntil(loaded(0))
	crate := ecs.NewMap3[Pos, CrateInfo, components.Regional](world).NewEntity(
		&Pos{X: 10, Y: 5}, &CrateInfo{Contents: []string{"rope", "lamp"}}, &components.Regional{})
	tick() // the plugin places the crate in its chunk and gives it an id
	id := ecs.NewMap1[components.Regional](world).Get(crate).ID

	ecs.NewMap1[components.Focus](world).Get(camera).X = 50 * 64 // far away: the crate's chunk unloads
	tickUntil(loaded(50))
	fmt.Println("crate alive:", world.Alive(crate))
	ecs.NewMap1[components.Focus](world).Get(camera).X = 0 // back
	tickUntil(loaded(0))
	again, ok := persistence.Entity(id)
	fmt.Println("back:", ok, ecs.NewMap1[CrateInfo](world).Get(again).Contents, *ecs.NewMap1[Pos](world).Get(again))
	// Output:
	// crate alive: false
	// back: true [rope lamp] {10 5}
}

// Players are saved apart, one record each: a player who leaves is saved
// and removed, one who joins is loaded; a load spawns none by itself.
func ExamplePersistence_LoadPlayer() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	ecs.ComponentID[CrateInfo](world)
	_, err := arksave.Plugin{Dir: filepath.Join(dir, "world1"), Generator: hills{}}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()

	// Ada joins: no record yet, a new player.
	var ada ecs.Entity
	if _, err := persistence.LoadPlayer("ada"); errors.Is(err, arksave.ErrNoPlayer) {
		ada = ecs.NewMap2[components.Player, CrateInfo](world).NewEntity(&components.Player{ID: "ada"}, &CrateInfo{Contents: []string{"map"}})
	}
	// Ada leaves: her record is set aside for the next save, her entities go.
	handle, err := persistence.SavePlayer("ada")
	if err != nil {
		fmt.Println(err)
		return
	}
	world.RemoveEntity(ada)
	fmt.Println("saved:", handle.Wait().Err, persistence.Players())

	// Ada joins again.
	ents, err := persistence.LoadPlayer("ada")
	fmt.Println("loaded:", err, ecs.NewMap1[CrateInfo](world).Get(ents[0]).Contents)
	// Output:
	// saved: <nil> [ada]
	// loaded: <nil> [map]
}

// A game keeps its own data with a chunk: the plugin saves it with the
// chunk's pixels and brings it back when the chunk is loaded, here in a
// fresh world that continues the save.
func ExamplePersistence_SetChunkData() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	type biome struct {
		Name     string
		Humidity float32
	}
	play := func(load bool) {
		world := ecs.NewWorld()
		systems, _ := arksave.Plugin{Dir: dir, ChunkSize: 64, Load: load}.Install(world)
		persistence := ecs.GetResource[arksave.Persistence](world)
		defer persistence.Close()
		ecs.NewMap1[components.Focus](world).NewEntity(&components.Focus{Radius: 0})
		home := components.ChunkPos{X: 0, Y: 0}
		for range 1000 { // stream the chunk in
			for _, s := range systems {
				s.Update(world)
			}
			if _, ok := ecs.GetResource[components.ChunkIndex](world).Get(home); ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if !load {
			// Opaque bytes (Persistence.SetChunkData), or a value of the
			// game's own type, encoded with msgpack:
			if err := arksave.SetChunkValue(persistence, home, biome{Name: "swamp", Humidity: 0.9}); err != nil {
				fmt.Println(err)
			}
			persistence.SaveNow()
			return
		}
		b, ok, err := arksave.ChunkValue[biome](persistence, home)
		fmt.Println("home:", b.Name, b.Humidity, ok, err)
	}
	play(false)
	play(true)
	// Output: home: swamp 0.9 true <nil>
}

// A game's log of its saves: Plugin.Logger takes any log/slog logger. This
// one writes text to a buffer, keeping the message and a few of the
// attributes (the others, durations and sizes among them, vary from run to
// run).
func ExamplePlugin_logger() {
	var buf bytes.Buffer
	keep := map[string]bool{slog.LevelKey: true, slog.MessageKey: true, "generation": true, "chunks": true, "entities": true, "chunks_stored": true}
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if !keep[a.Key] {
			return slog.Attr{}
		}
		return a
	}}))

	world := ecs.NewWorld()
	type Tree struct{ Height int }
	trees := ecs.NewMap1[Tree](world)
	for i := range 3 {
		trees.NewEntity(&Tree{Height: i})
	}
	systems, err := arksave.Plugin{Dir: "/saves/forest", FS: vfs.NewMem(), Generator: hills{}, Logger: logger}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	handle := persistence.Save()
	for !handle.IsComplete() {
		for _, s := range systems {
			s.Update(world)
		}
	}
	persistence.Close()
	fmt.Print(buf.String())
	// Output:
	// level=INFO msg="save started" generation=1 chunks=0
	// level=INFO msg="save committed" generation=1 chunks=0 chunks_stored=0 entities=3
}
