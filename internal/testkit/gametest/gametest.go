// Package gametest is the test game that the tests of package arksave and
// of package systems share: a world with a player that streams chunks around
// it, the plugin installed on it, its components (Position, Player, Score,
// the regional Crate and Tether, the players' Inventory) and the helpers that
// read what a save left on its file system. Only _test.go files import it.
package gametest

import (
	"hash/fnv"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/vfs"
)

var expect, must = testkit.Expect, testkit.Must

// ChunkSize is the side of the test game's chunks, in pixels.
const ChunkSize = 32

// Gen is a small deterministic generator: sky above y=0, stone below with
// a colour pattern.
type Gen struct{}

// Version is the generator's version: 1.
func (Gen) Version() uint32 { return 1 }

// Generate fills dst with chunk (x, y): sky above y=0, stone below.
func (Gen) Generate(x, y int32, seed uint64, dst []uint32) {
	n := int(ChunkSize)
	for i := range dst {
		py := int(y)*n + i/n
		if py < 0 {
			dst[i] = 0
		} else {
			dst[i] = uint32(components.MakePixel(3, uint8((i*7+int(seed))%5), 0, 0))
		}
	}
}

// Position is where a game entity of the test game stands.
type Position struct{ X, Y float64 }

// Player is the test game's own player component (not the plugin's
// components.Player).
type Player struct{ Name string }

// Score is the test game's resource.
type Score struct{ Points int }

// Game is a tiny game: a player entity with a Focus, chunks streamed
// around it, and the plugin's systems.
type Game struct {
	W       *ecs.World
	Systems []arksave.System     // what Install returned, run by Tick
	Pers    *arksave.Persistence // the world's Persistence resource
	Player  ecs.Entity           // the focus entity (zero when a load brought it back)
	Chunks  *ecs.Filter3[components.ChunkPos, components.Chunk, components.ChunkState]
	Bodies  *ecs.Map2[components.PixelBody, components.Persistable]
}

// Opts says how New and Install set up the plugin of the test game.
type Opts struct {
	FS       vfs.FS
	Dir      string
	Load     bool
	Create   bool // with Load: start a new world where there is no save
	Radius   int32
	Autosave *autosave.Config      // nil: an hourly autosave, off
	Prepare  func(*ecs.World)      // registers more game types before Install
	Plugin   func(*arksave.Plugin) // changes the plugin's settings before Install
}

// PositionOf is where the test game's regional entities stand.
var PositionOf = arksave.Position(func(p *Position) (float64, float64) { return p.X, p.Y })

// NoBackupCopy is the default autosave configuration without copies of the
// chunk store for backups, for tests that read damage where it is.
func NoBackupCopy() *autosave.Config {
	c := autosave.DefaultConfig()
	c.BackupCopyEvery = -1
	return &c
}

// New installs the plugin on a new world of the test game, as Install
// does, and stops the test if Install fails.
func New(t testing.TB, o Opts) *Game {
	t.Helper()
	g, err := Install(t, o)
	must(t, err)
	return g
}

// Install installs the plugin on a new world of the test game, and
// returns the error of Install. A game it returns is closed at the end of
// the test.
func Install(t testing.TB, o Opts) (*Game, error) {
	t.Helper()
	w := ecs.NewWorld()
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Player](w)
	ecs.AddResource(w, &Score{})
	if o.Prepare != nil {
		o.Prepare(w)
	}
	if o.Autosave == nil {
		o.Autosave = &autosave.Config{Interval: time.Hour, Enabled: false, MaxBackups: 1}
	}
	p := arksave.Plugin{
		Dir: o.Dir, Load: o.Load, LoadOrCreate: o.Create, Overwrite: !o.Load && !o.Create,
		ChunkSize: ChunkSize, TileSize: 8, Seed: 7, Generator: Gen{},
		Autosave: o.Autosave, FS: o.FS,
		Positions: []arksave.RegionalPosition{PositionOf},
	}
	if o.Plugin != nil {
		o.Plugin(&p)
	}
	systems, err := p.Install(w)
	if err != nil {
		return nil, err
	}
	g := &Game{
		W: w, Systems: systems,
		Pers:   ecs.GetResource[arksave.Persistence](w),
		Chunks: ecs.NewFilter3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		Bodies: ecs.NewMap2[components.PixelBody, components.Persistable](w),
	}
	if !o.Load || g.Pers.Generation() == 0 {
		m := ecs.NewMap3[Position, Player, components.Focus](w)
		g.Player = m.NewEntity(&Position{}, &Player{Name: "ada"}, &components.Focus{Radius: o.Radius})
	}
	t.Cleanup(func() { g.Pers.Close() })
	return g, nil
}

// Tick runs the plugin's systems once.
func (g *Game) Tick() {
	for _, s := range g.Systems {
		s.Update(g.W)
	}
}

// Settle ticks until every chunk around the focus is loaded and no load is
// on its way.
func (g *Game) Settle(t testing.TB) {
	t.Helper()
	ix := ecs.GetResource[components.ChunkIndex](g.W)
	want := -1
	q := ecs.NewFilter1[components.Focus](g.W).Query()
	for q.Next() {
		r := int(q.Get().Radius)
		want = (2*r + 1) * (2*r + 1)
	}
	for i := 0; i < 5000; i++ {
		g.Tick()
		if ix.Len() >= want {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("chunks did not load: %d of %d", ix.Len(), want)
}

// WaitSave ticks until the handle completes.
func (g *Game) WaitSave(t testing.TB, h *arksave.SaveHandle) *autosave.Result {
	t.Helper()
	for i := 0; i < 20000; i++ {
		g.Tick()
		if h.IsComplete() {
			return h.Result()
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatal("save did not complete")
	return nil
}

// Chunk returns the loaded chunk (x, y) with its state; it stops the test
// when the chunk is not loaded.
func (g *Game) Chunk(t testing.TB, x, y int32) (*components.Chunk, *components.ChunkState) {
	t.Helper()
	e, ok := ecs.GetResource[components.ChunkIndex](g.W).Get(components.ChunkPos{X: x, Y: y})
	expect(t, ok, "chunk %d,%d not loaded", x, y)
	_, c, s := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](g.W).Get(e)
	return c, s
}

// Paint sets one pixel and marks the chunk dirty if it changed.
func (g *Game) Paint(t testing.TB, x, y int32, px, py int, p components.Pixel) {
	t.Helper()
	c, s := g.Chunk(t, x, y)
	if c.Set(px, py, p) {
		s.MarkDirty()
	}
}

// State is the world's autosave.State resource.
func (g *Game) State() *autosave.State { return ecs.GetResource[autosave.State](g.W) }

// ChunkDigest hashes the persisted pixels of the loaded chunk (x, y).
func (g *Game) ChunkDigest(t testing.TB, x, y int32) uint64 {
	c, _ := g.Chunk(t, x, y)
	h := fnv.New64a()
	for _, p := range c.Pixels() {
		v := uint32(p) & components.PersistMask
		h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return h.Sum64()
}

// MoveFocus moves the test game's focus and waits for the chunks around it.
func (g *Game) MoveFocus(t testing.TB, x, y float64) {
	t.Helper()
	q := ecs.NewFilter1[components.Focus](g.W).Query()
	for q.Next() {
		f := q.Get()
		f.X, f.Y = x, y
	}
	g.Settle(t)
}

// CountBodies counts the pixel bodies in the world.
func CountBodies(g *Game) int {
	q := ecs.NewFilter1[components.PixelBody](g.W).Query()
	defer q.Close()
	return q.Count()
}
