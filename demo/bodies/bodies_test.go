package bodies_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

var expect = testworld.Expect

type fixture struct {
	*testworld.World
	sys  *bodies.System
	body *ecs.Map1[components.PixelBody]
	ids  *components.BodyIDs
}

func newFixture(t *testing.T, size int) *fixture {
	sys := &bodies.System{}
	tw := testworld.New(t, size, 1, sys)
	return &fixture{World: tw, sys: sys, body: ecs.NewMap1[components.PixelBody](tw.W), ids: ecs.GetResource[components.BodyIDs](tw.W)}
}

func (f *fixture) drop(kind bodies.Kind, x, y float32) ecs.Entity {
	b := bodies.New(kind, f.ids.New(), x, y, 7)
	return f.body.NewEntity(&b)
}

// resting ticks until every body sleeps and no tile is awake.
func (f *fixture) rest(limit int) int {
	motion := ecs.NewMap[bodies.Motion](f.W)
	return f.Settle(limit, func() bool {
		q := ecs.NewFilter1[components.PixelBody](f.W).Query()
		ok := true
		for q.Next() {
			ok = ok && motion.Get(q.Entity()).Asleep
		}
		return ok
	})
}

// checkBlit verifies that the world holds body b's pixels, flagged, exactly
// at its blitted transform, and nowhere else.
func (f *fixture) checkBlit(b *components.PixelBody) {
	f.T.Helper()
	n := 0
	for _, s := range b.Shape {
		if s {
			n++
		}
	}
	expect(f.T, f.CountFlag() == n, "world has %d body pixels, the body has %d", f.CountFlag(), n)
	expect(f.T, b.X == float32(int(b.X)) && b.Y == float32(int(b.Y)), "blitted position not whole pixels: %v,%v", b.X, b.Y)
}

func TestCrateFallsAndRests(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 60))
	e := f.drop(bodies.Crate, 30, 10)
	ticks := f.rest(600)
	b := f.body.Get(e)
	// the crate's bottom row sits on the floor at y = 60
	expect(t, b.Y == 60-8 && b.Rotation == 0, "crate rests at y=%v rot=%v after %d ticks", b.Y, b.Rotation, ticks)
	f.checkBlit(b)
	expect(t, f.At(30, 59).Flags()&components.FlagPixelBody != 0, "no body pixel above the floor")

	// at rest nothing changes: no pixel, no dirty mark
	v := f.State(0, 0).Version
	f.Tick(30)
	expect(t, f.State(0, 0).Version == v, "a body at rest keeps marking its chunk")
}

func TestRockTopplesOffLedge(t *testing.T) {
	f := newFixture(t, 64)
	// a ledge on the left; the rock stands mostly over the drop
	f.AddChunk(0, 0, func(x, y int) components.Pixel {
		if y >= 62 || (x < 24 && y >= 30) {
			return testworld.Stone
		}
		return 0
	})
	e := f.drop(bodies.Rock, 26, 20)
	turned := false
	for range 400 {
		f.Tick(1)
		turned = turned || f.body.Get(e).Rotation != 0
	}
	b := f.body.Get(e)
	expect(t, turned, "the rock never turned")
	expect(t, b.Y > 40, "the rock did not fall off the ledge: y=%v", b.Y)
	f.rest(600)
	f.checkBlit(f.body.Get(e))
}

func TestCrateFloatsRockSinks(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, func(x, y int) components.Pixel {
		switch {
		case y == 63 || x == 0 || x == 63:
			return testworld.Stone
		case y >= 30:
			return sand.Make(sand.Water, 0)
		}
		return 0
	})
	water := f.Count(sand.Water)
	crate := f.drop(bodies.Crate, 16, 10)
	rock := f.drop(bodies.Rock, 46, 10)
	f.Tick(400)
	expect(t, f.body.Get(crate).Y < 36, "the crate sank: y=%v", f.body.Get(crate).Y)
	expect(t, f.body.Get(rock).Y > 48, "the rock floats: y=%v", f.body.Get(rock).Y)
	expect(t, f.Count(sand.Water) >= water-40, "bodies destroyed water: %d of %d left", f.Count(sand.Water), water)
}

func TestSandRestsOnBody(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
	e := f.drop(bodies.Crate, 32, 54)
	f.rest(200)
	f.Paint(func(set func(x, y int, p components.Pixel)) {
		for x := 30; x < 35; x++ {
			set(x, 20, sand.Make(sand.Sand, 0))
		}
	})
	f.rest(400)
	top := int(f.body.Get(e).Y) - 8
	expect(t, sand.MaterialOf(f.At(32, top-1)) == sand.Sand, "sand did not land on the crate")
	f.checkBlit(f.body.Get(e))
}

func TestEraseRemovesPixels(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
	e := f.drop(bodies.Rock, 20, 20)
	f.Tick(20)
	expect(t, f.CountFlag() > 0, "the rock was never drawn")
	f.Field.Begin()
	bodies.Erase(f.Field, f.body.Get(e))
	f.Field.End()
	f.W.RemoveEntity(e)
	expect(t, f.CountFlag() == 0, "%d body pixels left after Erase", f.CountFlag())
}

func TestBodyStopsWhereChunkUnloads(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, nil)
	f.AddChunk(0, 1, nil)
	e := f.drop(bodies.Crate, 32, 40)
	f.Tick(5)
	f.RemoveChunk(0, 0)
	f.Tick(1)
	// its centre is in the removed chunk now or soon; either way it never
	// falls out of the loaded world
	f.Tick(200)
	b := f.body.Get(e)
	expect(t, b.Y < 128, "the body left the loaded world: y=%v", b.Y)
	expect(t, f.sys.Stats().Frozen+f.sys.Stats().Awake <= 1, "stats count a body twice")
}

func TestBodiesDeterministic(t *testing.T) {
	run := func() map[components.ChunkPos][]components.Pixel {
		f := newFixture(t, 64)
		f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
		f.drop(bodies.Rock, 20, 10)
		f.drop(bodies.Crate, 28, 30)
		f.drop(bodies.Rock, 40, 5)
		f.Tick(200)
		return f.Snapshot()
	}
	a, b := run(), run()
	for pos := range a {
		for i := range a[pos] {
			expect(t, a[pos][i] == b[pos][i], "runs differ at %v index %d", pos, i)
		}
	}
}

// A body woken by a change nearby that does not move writes nothing.
func TestWokenStillBodyWritesNothing(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
	f.AddChunk(1, 0, testworld.Box(64, 0, 127, 63))
	e := f.drop(bodies.Crate, 50, 40)
	f.rest(300)
	v := f.State(0, 0).Version
	f.Paint(func(set func(x, y int, p components.Pixel)) { set(70, 50, sand.Make(sand.Sand, 0)) })
	f.Tick(1)
	motion := ecs.NewMap[bodies.Motion](f.W)
	expect(t, !motion.Get(e).Asleep, "the change next door must wake the body")
	f.rest(300)
	expect(t, f.State(0, 0).Version == v, "a still body marked its chunk: version %d -> %d", v, f.State(0, 0).Version)
}

// When the chunk under a body is unloaded and loaded again without its
// pixels (as the stand-in streamer does), the body draws itself back.
func TestBodyRedrawnWhenChunkReloads(t *testing.T) {
	f := newFixture(t, 64)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
	e := f.drop(bodies.Crate, 32, 30)
	f.rest(300)
	want := f.CountFlag()
	f.RemoveChunk(0, 0)
	f.Tick(3)
	f.AddChunk(0, 0, testworld.Box(0, 0, 63, 63))
	f.Tick(2)
	expect(t, f.CountFlag() == want, "after the reload the body has %d of its %d pixels in the world", f.CountFlag(), want)
	f.checkBlit(f.body.Get(e))
}
