package arksave_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// chaos fails reads of the chunk store's data files with EIO, each with
// probability read, and mutating calls with EIO or ENOSPC with probability
// write: a disk that comes and goes.
type chaos struct {
	mu          sync.Mutex
	rng         *rand.Rand
	read, write float64
}

func (c *chaos) set(read, write float64) {
	c.mu.Lock()
	c.read, c.write = read, write
	c.mu.Unlock()
}

func (c *chaos) Inject(op vfs.Op, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var p float64
	switch {
	case op == vfs.OpRead:
		if _, _, ok := chunkstore.ParseDataFileName(filepath.Base(name)); ok {
			p = c.read
		}
	case op.Mutating() && op != vfs.OpLock:
		p = c.write
	}
	if p == 0 || c.rng.Float64() >= p {
		return nil
	}
	errno := syscall.EIO
	if op != vfs.OpRead && c.rng.IntN(2) == 0 {
		errno = syscall.ENOSPC
	}
	return &fs.PathError{Op: op.String(), Path: name, Err: errno}
}

// worldModel is what the game did: every chunk's persisted pixels (a chunk
// it never changed is the generated one), every crate and pixel body.
type worldModel struct {
	chunks map[components.ChunkPos][]components.Pixel
	crates map[uint64]crateView
	bodies map[components.BodyID]string
}

// pixels returns the model's pixels of the chunk at pos.
func (m *worldModel) pixels(pos components.ChunkPos) []components.Pixel {
	if px, ok := m.chunks[pos]; ok {
		return px
	}
	raw := make([]uint32, testChunk*testChunk)
	gen{}.Generate(pos.X, pos.Y, 7, raw)
	px := make([]components.Pixel, len(raw))
	for i, v := range raw {
		px[i] = components.Pixel(v) & components.PersistMask
	}
	m.chunks[pos] = px
	return px
}

// check compares every loaded chunk, crate and pixel body with the model.
func (m *worldModel) check(t testing.TB, g *game, when string) {
	t.Helper()
	ecs.GetResource[components.ChunkIndex](g.w).All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		c, _ := g.chunk(t, pos.X, pos.Y)
		want := m.pixels(pos)
		for i, p := range c.Pixels() {
			if p&components.PersistMask != want[i] {
				t.Fatalf("%s: chunk %v pixel %d is %08x, want %08x", when, pos, i, uint32(p&components.PersistMask), uint32(want[i]))
			}
		}
		return true
	})
	crates, _ := g.crates(t)
	for id, c := range crates {
		expect(t, m.crates[id] == c, "%s: crate %d is %+v, want %+v", when, id, c, m.crates[id])
	}
	for id, b := range bodyViews(g) {
		expect(t, m.bodies[id] == b, "%s: body %d is %s, want %s", when, id, b, m.bodies[id])
	}
}

// TestReadErrorsLoseNothing: a disk whose reads (and, in some rounds,
// writes) fail at random points while the focus moves, the game paints,
// moves and changes its entities, and saves: every chunk that streams in is
// what the game last had (never a generated one over a stored one), no
// read error is reported as damage, and once the disk heals a save and a
// load of it hold everything the game did.
func TestReadErrorsLoseNothing(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	mem := vfs.NewMem()
	ch := &chaos{rng: rand.New(rand.NewPCG(seed, 2))}
	g := regionalGame(t, gameOpts{fs: &vfs.Faulty{FS: mem, Injector: ch}, dir: "/save", radius: 1, autosave: noBackupCopy()})
	m := &worldModel{chunks: map[components.ChunkPos][]components.Pixel{}, crates: map[uint64]crateView{}, bodies: map[components.BodyID]string{}}
	buildStoredWorld(t, g)
	for _, p := range around() {
		c, _ := g.chunk(t, p.X, p.Y)
		px := make([]components.Pixel, len(c.Pixels()))
		for i, v := range c.Pixels() {
			px[i] = v & components.PersistMask
		}
		m.chunks[p] = px
	}
	m.crates, _ = g.crates(t)
	for id, b := range bodyViews(g) {
		m.bodies[id] = b
	}
	// Back and forth, so that chunks saved before stream in again.
	centres := [][2]float64{{0, 0}, {3, 0}, {0, 0}, {0, 3}, {3, 3}, {3, 0}, {0, 0}, {0, 3}}
	readFailures, failedSaves := 0, 0
	const rounds = 8
	for round := range rounds {
		read, write := []float64{0.3, 0.6, 1}[rng.IntN(3)], 0.0
		if rng.IntN(3) == 0 {
			write = 0.05
		}
		ch.set(read, write)
		c := centres[round%len(centres)]
		g.setFocus((c[0]+0.5)*testChunk, (c[1]+0.5)*testChunk)
		for i := range 40 {
			g.tick()
			m.check(t, g, fmt.Sprintf("round %d tick %d", round, i))
			time.Sleep(200 * time.Microsecond)
		}
		m.play(t, g, rng)
		res := g.waitSave(t, g.pers.Save())
		m.check(t, g, fmt.Sprintf("round %d after a save (%v)", round, res.Err))
		if res.Err != nil {
			failedSaves++
		}
		for _, p := range g.pers.Problems() {
			expect(t, !errors.Is(p.Err, arksave.ErrCorrupt), "round %d: damage reported: %v", round, p)
			if p.Section == chunkstore.SectionChunk {
				readFailures++
			}
		}
	}
	t.Logf("%d chunk reads failed and were reported, %d of %d saves failed", readFailures, failedSaves, rounds)
	expect(t, readFailures > 0, "no chunk read failed: the test tests nothing")

	ch.set(0, 0)
	must(t, g.pers.SaveNow().Err)
	must(t, g.pers.Close())
	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	seen := map[uint64]bool{}
	visit := map[components.ChunkPos]bool{}
	for _, c := range centres {
		visit[components.ChunkPos{X: int32(c[0]), Y: int32(c[1])}] = true
	}
	for _, c := range m.crates {
		visit[components.ChunkOf(c.X, c.Y, testChunk)] = true
	}
	for pos := range visit {
		h.moveFocus(t, (float64(pos.X)+0.5)*testChunk, (float64(pos.Y)+0.5)*testChunk)
		m.check(t, h, fmt.Sprintf("after the load, around %v", pos))
		crates, _ := h.crates(t)
		for id := range crates {
			seen[id] = true
		}
	}
	for id, c := range m.crates {
		expect(t, seen[id], "crate %d (%+v) lost", id, c)
	}
}

// play paints pixels of loaded chunks, changes and moves crates (into
// chunks that may not be loaded) and spawns new ones, keeping the model.
func (m *worldModel) play(t testing.TB, g *game, rng *rand.Rand) {
	t.Helper()
	var loaded []components.ChunkPos
	ecs.GetResource[components.ChunkIndex](g.w).All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		loaded = append(loaded, pos)
		return true
	})
	if len(loaded) == 0 {
		return
	}
	for range 5 {
		pos := loaded[rng.IntN(len(loaded))]
		x, y := rng.IntN(testChunk), rng.IntN(testChunk)
		p := components.MakePixel(uint8(1+rng.IntN(200)), uint8(rng.IntN(8)), 0, 0)
		g.paint(t, pos.X, pos.Y, x, y, p)
		m.pixels(pos)[y*testChunk+x] = p & components.PersistMask
	}
	_, ents := g.crates(t)
	pmap, cmap := ecs.NewMap1[Position](g.w), ecs.NewMap1[Crate](g.w)
	for id, e := range ents {
		switch rng.IntN(3) {
		case 0:
			cmap.Get(e).HP++
			must(t, g.pers.MarkDirty(e))
		case 1:
			p := pmap.Get(e)
			p.X += float64(rng.IntN(3)-1) * testChunk
			p.Y += float64(rng.IntN(3)-1) * testChunk
		}
		v := m.crates[id]
		v.X, v.Y, v.HP = pmap.Get(e).X, pmap.Get(e).Y, cmap.Get(e).HP
		m.crates[id] = v
	}
	pos := loaded[rng.IntN(len(loaded))]
	x, y := (float64(pos.X)+0.25)*testChunk, (float64(pos.Y)+0.75)*testChunk
	id := uint64(1000 + len(m.crates))
	g.spawnCrate(x, y, id, len(m.crates))
	m.crates[id] = crateView{X: x, Y: y, HP: len(m.crates), Tags: fmt.Sprint([]string{"wood", fmt.Sprint(len(m.crates))})}
	g.tick()
}
