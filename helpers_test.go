package arksave_test

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

const testChunk = 32

// gen is a small deterministic generator: sky above y=0, stone below with
// a colour pattern.
type gen struct{}

func (gen) Version() uint32 { return 1 }
func (gen) Generate(x, y int32, seed uint64, dst []uint32) {
	n := int(testChunk)
	for i := range dst {
		py := int(y)*n + i/n
		if py < 0 {
			dst[i] = 0
		} else {
			dst[i] = uint32(components.MakePixel(3, uint8((i*7+int(seed))%5), 0, 0))
		}
	}
}

// Game components and resources of the test game.
type Position struct{ X, Y float64 }
type Player struct{ Name string }
type Score struct{ Points int }

// game is a tiny game: a player entity with a Focus, chunks streamed
// around it, and the plugin's systems.
type game struct {
	w       *ecs.World
	systems []arksave.System
	pers    *arksave.Persistence
	player  ecs.Entity
	chunks  *ecs.Filter3[components.ChunkPos, components.Chunk, components.ChunkState]
	bodies  *ecs.Map2[components.PixelBody, components.Persistable]
}

type gameOpts struct {
	fs       vfs.FS
	dir      string
	load     bool
	create   bool // with load: start a new world where there is no save
	radius   int32
	autosave *autosave.Config
	prepare  func(*ecs.World) // registers more game types before Install
	plugin   func(*arksave.Plugin)
}

// position is where the test game's regional entities stand.
var position = arksave.Position(func(p *Position) (float64, float64) { return p.X, p.Y })

// noBackupCopy is the default autosave configuration without copies of the
// chunk store for backups, for tests that read damage where it is.
func noBackupCopy() *autosave.Config {
	c := autosave.DefaultConfig()
	c.BackupCopyEvery = -1
	return &c
}

func newGame(t testing.TB, o gameOpts) *game {
	t.Helper()
	g, err := installGame(t, o)
	must(t, err)
	return g
}

// installGame installs the plugin on a new world of the test game, and
// returns the error of Install. A game it returns is closed at the end of
// the test.
func installGame(t testing.TB, o gameOpts) (*game, error) {
	t.Helper()
	w := ecs.NewWorld()
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Player](w)
	ecs.AddResource(w, &Score{})
	if o.prepare != nil {
		o.prepare(w)
	}
	if o.autosave == nil {
		o.autosave = &autosave.Config{Interval: time.Hour, Enabled: false, MaxBackups: 1}
	}
	p := arksave.Plugin{
		Dir: o.dir, Load: o.load, LoadOrCreate: o.create, Overwrite: !o.load && !o.create,
		ChunkSize: testChunk, TileSize: 8, Seed: 7, Generator: gen{},
		Autosave: o.autosave, FS: o.fs,
		Positions: []arksave.RegionalPosition{position},
	}
	if o.plugin != nil {
		o.plugin(&p)
	}
	systems, err := p.Install(w)
	if err != nil {
		return nil, err
	}
	g := &game{
		w: w, systems: systems,
		pers:   ecs.GetResource[arksave.Persistence](w),
		chunks: ecs.NewFilter3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		bodies: ecs.NewMap2[components.PixelBody, components.Persistable](w),
	}
	if !o.load || g.pers.Generation() == 0 {
		m := ecs.NewMap3[Position, Player, components.Focus](w)
		g.player = m.NewEntity(&Position{}, &Player{Name: "ada"}, &components.Focus{Radius: o.radius})
	}
	t.Cleanup(func() { g.pers.Close() })
	return g, nil
}

func (g *game) tick() {
	for _, s := range g.systems {
		s.Update(g.w)
	}
}

// settle ticks until every chunk around the focus is loaded and no load is
// on its way.
func (g *game) settle(t testing.TB) {
	t.Helper()
	ix := ecs.GetResource[components.ChunkIndex](g.w)
	want := -1
	q := ecs.NewFilter1[components.Focus](g.w).Query()
	for q.Next() {
		r := int(q.Get().Radius)
		want = (2*r + 1) * (2*r + 1)
	}
	for i := 0; i < 5000; i++ {
		g.tick()
		if ix.Len() >= want {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("chunks did not load: %d of %d", ix.Len(), want)
}

// waitSave ticks until the handle completes.
func (g *game) waitSave(t testing.TB, h *arksave.SaveHandle) *autosave.Result {
	t.Helper()
	for i := 0; i < 20000; i++ {
		g.tick()
		if h.IsComplete() {
			return h.Result()
		}
		time.Sleep(100 * time.Microsecond)
	}
	t.Fatal("save did not complete")
	return nil
}

func (g *game) chunk(t testing.TB, x, y int32) (*components.Chunk, *components.ChunkState) {
	t.Helper()
	e, ok := ecs.GetResource[components.ChunkIndex](g.w).Get(components.ChunkPos{X: x, Y: y})
	expect(t, ok, "chunk %d,%d not loaded", x, y)
	_, c, s := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](g.w).Get(e)
	return c, s
}

// paint sets one pixel and marks the chunk dirty if it changed.
func (g *game) paint(t testing.TB, x, y int32, px, py int, p components.Pixel) {
	t.Helper()
	c, s := g.chunk(t, x, y)
	if c.Set(px, py, p) {
		s.MarkDirty()
	}
}

func (g *game) state() *autosave.State { return ecs.GetResource[autosave.State](g.w) }

// digest hashes the loaded chunks' persisted pixels.
func (g *game) chunkDigest(t testing.TB, x, y int32) uint64 {
	c, _ := g.chunk(t, x, y)
	h := fnv.New64a()
	for _, p := range c.Pixels() {
		v := uint32(p) & components.PersistMask
		h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return h.Sum64()
}
