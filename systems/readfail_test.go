package systems_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// readFaults fails reads of the chunk store's data files with EIO (an I/O
// error, not damage) while on, and counts the reads it failed.
type readFaults struct {
	on     atomic.Bool
	failed atomic.Int64
}

func (f *readFaults) Inject(op vfs.Op, name string) error {
	if op != vfs.OpRead || !f.on.Load() {
		return nil
	}
	if _, _, ok := storetool.Tool.ParseDataFileName(filepath.Base(name)); !ok {
		return nil
	}
	f.failed.Add(1)
	return &fs.PathError{Op: op.String(), Path: name, Err: syscall.EIO}
}

// around lists the chunks within radius 1 of chunk (0,0).
func around() []components.ChunkPos {
	var out []components.ChunkPos
	for y := int32(-1); y <= 1; y++ {
		for x := int32(-1); x <= 1; x++ {
			out = append(out, components.ChunkPos{X: x, Y: y})
		}
	}
	return out
}

// bodyViews returns every pixel body in the world, all its fields, by id.
func bodyViews(g *gametest.Game) map[components.BodyID]string {
	out := map[components.BodyID]string{}
	q := ecs.NewFilter1[components.PixelBody](g.W).Query()
	for q.Next() {
		b := q.Get()
		out[b.ID] = fmt.Sprintf("%+v", *b)
	}
	return out
}

// loadedOf returns which of ps are loaded.
func loadedOf(g *gametest.Game, ps []components.ChunkPos) []components.ChunkPos {
	ix := ecs.GetResource[components.ChunkIndex](g.W)
	var out []components.ChunkPos
	for _, p := range ps {
		if _, ok := ix.Get(p); ok {
			out = append(out, p)
		}
	}
	return out
}

// setFocus moves the test game's focus without waiting for chunks.
func setFocus(g *gametest.Game, x, y float64) {
	q := ecs.NewFilter1[components.Focus](g.W).Query()
	for q.Next() {
		f := q.Get()
		f.X, f.Y = x, y
	}
}

// storedWorld is what a test world holds around chunk (0,0): the pixels of
// every chunk, the crates and the pixel bodies.
type storedWorld struct {
	digests map[components.ChunkPos]uint64
	crates  string
	bodies  string
}

func storedWorldOf(g *gametest.Game, t testing.TB) storedWorld {
	t.Helper()
	s := storedWorld{digests: map[components.ChunkPos]uint64{}}
	for _, p := range around() {
		s.digests[p] = g.ChunkDigest(t, p.X, p.Y)
	}
	crates, _ := g.Crates(t)
	s.crates = fmt.Sprint(crates)
	s.bodies = fmt.Sprint(bodyViews(g))
	return s
}

func (s storedWorld) diff(o storedWorld) string {
	var out []string
	for p, d := range s.digests {
		if o.digests[p] != d {
			out = append(out, fmt.Sprintf("chunk %v differs", p))
		}
	}
	sort.Strings(out)
	if s.crates != o.crates {
		out = append(out, fmt.Sprintf("crates %s, want %s", o.crates, s.crates))
	}
	if s.bodies != o.bodies {
		out = append(out, fmt.Sprintf("bodies %s, want %s", o.bodies, s.bodies))
	}
	return fmt.Sprint(out)
}

// buildStoredWorld paints every chunk around (0,0), puts crates and pixel
// bodies into some of them and saves.
func buildStoredWorld(t testing.TB, g *gametest.Game) storedWorld {
	t.Helper()
	g.Settle(t)
	for i, p := range around() {
		g.Paint(t, p.X, p.Y, i+1, 2*i+1, components.MakePixel(uint8(20+i), 1, 0, 0))
	}
	ids := ecs.GetResource[components.BodyIDs](g.W)
	for i, at := range [][2]float32{{40, 45}, {-20, 10}, {5, -25}} {
		b := components.PixelBody{ID: ids.New(), X: at[0], Y: at[1], Rotation: 0.25 * float32(i), VX: float32(i), Width: 2, Height: 1,
			Pixels: []components.Pixel{components.Pixel(i + 1), 7}, Shape: []bool{true, i != 1}}
		g.Bodies.NewEntity(&b, &components.Persistable{})
	}
	g.SpawnCrate(-5, 3, 0, 3)
	g.SpawnCrate(50, 50, 0, 8)
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	return storedWorldOf(g, t)
}

// TestStreamingReadErrorKeepsStoredChunks: while the chunk store's data
// file cannot be read (an I/O error, not damage), chunks that stream in
// stay unloaded and are retried with a backoff, never loaded as generated
// and never saved over the stored ones; their bodies and entities are not
// dropped; the failure is reported, and once the disk heals they come
// back exactly, as a save and a load of it then show.
func TestStreamingReadErrorKeepsStoredChunks(t *testing.T) {
	mem := vfs.NewMem()
	faults := &readFaults{}
	logs := &gametest.Records{}
	g := regionalGame(t, gametest.Opts{FS: vfs.Faulty(mem, faults), Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy(),
		Plugin: func(p *arksave.Plugin) { p.Logger = slog.New(logs) }})
	want := buildStoredWorld(t, g)
	g.Pers.Problems()

	g.MoveFocus(t, 20*gametest.ChunkSize, 0)
	expect(t, len(loadedOf(g, around())) == 0, "chunks around 0,0 still loaded")
	faults.on.Store(true)
	setFocus(g, 0, 0)
	const ticks = 120
	for range ticks {
		g.Tick()
		time.Sleep(time.Millisecond)
	}
	expect(t, faults.failed.Load() > 0, "no read of the data file was tried")
	expect(t, len(loadedOf(g, around())) == 0, "chunks loaded while their records cannot be read: %v", loadedOf(g, around()))
	crates, _ := g.Crates(t)
	expect(t, len(crates) == 0 && gametest.CountBodies(g) == 0, "entities spawned without their chunk: %v, %d bodies", crates, gametest.CountBodies(g))
	expect(t, faults.failed.Load() <= int64(len(around())*ticks/4), "%d failed reads in %d ticks: retried without a backoff", faults.failed.Load(), ticks)
	probs := g.Pers.Problems()
	expect(t, len(probs) == len(around()), "%d problems for %d chunks that could not be read, once each: %v", len(probs), len(around()), probs)
	attrs, ok := logs.Find(slog.LevelWarn, "chunk read failed: not loaded, read again later")
	expect(t, ok && errors.Is(attrs["err"].Any().(error), syscall.EIO), "the failed read is not logged: %v", logs.Messages())
	for _, p := range probs {
		expect(t, errors.Is(p.Err, syscall.EIO) && !errors.Is(p.Err, arksave.ErrCorrupt) && p.Pos != nil,
			"a problem that is not the read error, or reads as damage: %v", p)
	}
	// A save while the reads fail writes nothing over the stored chunks.
	must(t, g.Pers.SaveNow().Err)
	st, _ := gametest.OpenCommittedStore(t, mem, "/save")
	for _, p := range around() {
		raw, ok, err := storetool.Tool.ReadRaw(st, chunkstore.Pos{X: p.X, Y: p.Y})
		must(t, err)
		expect(t, ok && raw.Type != chunkstore.Empty, "chunk %v lost its record: %+v", p, raw)
	}
	must(t, st.Close())

	faults.on.Store(false)
	g.Settle(t)
	_, ok = logs.Find(slog.LevelInfo, "chunk read after failed reads")
	expect(t, ok, "the chunks read after failures are not logged: %v", logs.Messages())
	got := storedWorldOf(g, t)
	expect(t, got.diff(want) == "[]", "after the disk healed: %s", got.diff(want))
	for _, p := range g.Pers.Problems() {
		expect(t, !errors.Is(p.Err, arksave.ErrCorrupt), "damage reported for a read error: %v", p)
	}

	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())
	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	got = storedWorldOf(h, t)
	expect(t, got.diff(want) == "[]", "after a save and a load: %s", got.diff(want))
}

// TestDamagedChunkRecordRegenerates: a chunk record that fails its checksum
// is damage: the chunk streams in as generated and the damage is reported.
func TestDamagedChunkRecordRegenerates(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
	g.Settle(t)
	generated := g.ChunkDigest(t, 1, 1)
	g.Paint(t, 1, 1, 5, 6, components.MakePixel(12, 3, 0, 0))
	expect(t, g.ChunkDigest(t, 1, 1) != generated, "the paint changed nothing")
	must(t, g.Pers.SaveNow().Err)
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)

	st, m := gametest.OpenCommittedStore(t, mem, "/save")
	raw, ok, err := storetool.Tool.ReadRaw(st, chunkstore.Pos{X: 1, Y: 1})
	must(t, err)
	expect(t, ok && !raw.Handle.IsZero(), "chunk 1,1 not stored")
	must(t, st.Close())
	name := m.Chunks.Name
	if n := raw.Handle.File(); n > 0 {
		name = storetool.Tool.DataFileName(name, n)
	}
	gametest.FlipAt(t, mem, "/save/"+name, raw.Handle.FileOffset()+int64(raw.Handle.Length)-2)

	g.Pers.Problems()
	g.MoveFocus(t, 0, 0)
	expect(t, g.ChunkDigest(t, 1, 1) == generated, "a damaged record does not read as the generated chunk")
	found := false
	for _, p := range g.Pers.Problems() {
		if p.Pos != nil && p.Pos.X == 1 && p.Pos.Y == 1 && errors.Is(p.Err, arksave.ErrCorrupt) {
			found = true
		}
	}
	expect(t, found, "the damaged record is not reported")
}

// TestMergeDuringReadErrorKeepsStoredEntities: an entity placed into a
// chunk that is not loaded is added to what the store holds for it; when
// that cannot be read (an I/O error, not damage) the save fails instead of
// replacing the stored entities with the new one, and the next save after
// the disk healed keeps both.
func TestMergeDuringReadErrorKeepsStoredEntities(t *testing.T) {
	mem := vfs.NewMem()
	faults := &readFaults{}
	g := regionalGame(t, gametest.Opts{FS: vfs.Faulty(mem, faults), Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
	want := buildStoredWorld(t, g)
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)

	g.SpawnCrate(52, 60, 900, 9) // chunk (1,1), not loaded: unloaded into it
	g.Tick()
	faults.on.Store(true)
	res := g.Pers.SaveNow()
	expect(t, errors.Is(res.Err, syscall.EIO), "a save that could not read the stored entities it adds to: %v", res.Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1}).Bodies) == 1, "the stored body of chunk 1,1 is gone")

	faults.on.Store(false)
	must(t, g.Pers.SaveNow().Err)
	g.MoveFocus(t, 0, 0)
	crates, _ := g.Crates(t)
	expect(t, crates[900].HP == 9, "the new crate is lost: %v", crates)
	delete(crates, 900)
	got := storedWorldOf(g, t)
	got.crates = fmt.Sprint(crates)
	expect(t, got.diff(want) == "[]", "after the merge: %s", got.diff(want))
}

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
		if _, _, ok := storetool.Tool.ParseDataFileName(filepath.Base(name)); ok {
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
	crates map[uint64]gametest.CrateView
	bodies map[components.BodyID]string
}

// pixels returns the model's pixels of the chunk at pos.
func (m *worldModel) pixels(pos components.ChunkPos) []components.Pixel {
	if px, ok := m.chunks[pos]; ok {
		return px
	}
	raw := make([]uint32, gametest.ChunkSize*gametest.ChunkSize)
	gametest.Gen{}.Generate(pos.X, pos.Y, 7, raw)
	px := make([]components.Pixel, len(raw))
	for i, v := range raw {
		px[i] = components.Pixel(v) & components.PersistMask
	}
	m.chunks[pos] = px
	return px
}

// check compares every loaded chunk, crate and pixel body with the model.
func (m *worldModel) check(t testing.TB, g *gametest.Game, when string) {
	t.Helper()
	ecs.GetResource[components.ChunkIndex](g.W).All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		c, _ := g.Chunk(t, pos.X, pos.Y)
		want := m.pixels(pos)
		for i, p := range c.Pixels() {
			if p&components.PersistMask != want[i] {
				t.Fatalf("%s: chunk %v pixel %d is %08x, want %08x", when, pos, i, uint32(p&components.PersistMask), uint32(want[i]))
			}
		}
		return true
	})
	crates, _ := g.Crates(t)
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
	g := regionalGame(t, gametest.Opts{FS: vfs.Faulty(mem, ch), Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
	m := &worldModel{chunks: map[components.ChunkPos][]components.Pixel{}, crates: map[uint64]gametest.CrateView{}, bodies: map[components.BodyID]string{}}
	buildStoredWorld(t, g)
	for _, p := range around() {
		c, _ := g.Chunk(t, p.X, p.Y)
		px := make([]components.Pixel, len(c.Pixels()))
		for i, v := range c.Pixels() {
			px[i] = v & components.PersistMask
		}
		m.chunks[p] = px
	}
	m.crates, _ = g.Crates(t)
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
		setFocus(g, (c[0]+0.5)*gametest.ChunkSize, (c[1]+0.5)*gametest.ChunkSize)
		for i := range 40 {
			g.Tick()
			m.check(t, g, fmt.Sprintf("round %d tick %d", round, i))
			time.Sleep(200 * time.Microsecond)
		}
		m.play(t, g, rng)
		res := g.WaitSave(t, g.Pers.Save())
		m.check(t, g, fmt.Sprintf("round %d after a save (%v)", round, res.Err))
		if res.Err != nil {
			failedSaves++
		}
		for _, p := range g.Pers.Problems() {
			expect(t, !errors.Is(p.Err, arksave.ErrCorrupt), "round %d: damage reported: %v", round, p)
			if p.Section == chunkstore.SectionChunk {
				readFailures++
			}
		}
	}
	t.Logf("%d chunk reads failed and were reported, %d of %d saves failed", readFailures, failedSaves, rounds)
	expect(t, readFailures > 0, "no chunk read failed: the test tests nothing")

	ch.set(0, 0)
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())
	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	seen := map[uint64]bool{}
	visit := map[components.ChunkPos]bool{}
	for _, c := range centres {
		visit[components.ChunkPos{X: int32(c[0]), Y: int32(c[1])}] = true
	}
	for _, c := range m.crates {
		visit[components.ChunkOf(c.X, c.Y, gametest.ChunkSize)] = true
	}
	for pos := range visit {
		h.MoveFocus(t, (float64(pos.X)+0.5)*gametest.ChunkSize, (float64(pos.Y)+0.5)*gametest.ChunkSize)
		m.check(t, h, fmt.Sprintf("after the load, around %v", pos))
		crates, _ := h.Crates(t)
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
func (m *worldModel) play(t testing.TB, g *gametest.Game, rng *rand.Rand) {
	t.Helper()
	var loaded []components.ChunkPos
	ecs.GetResource[components.ChunkIndex](g.W).All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		loaded = append(loaded, pos)
		return true
	})
	if len(loaded) == 0 {
		return
	}
	for range 5 {
		pos := loaded[rng.IntN(len(loaded))]
		x, y := rng.IntN(gametest.ChunkSize), rng.IntN(gametest.ChunkSize)
		p := components.MakePixel(uint8(1+rng.IntN(200)), uint8(rng.IntN(8)), 0, 0)
		g.Paint(t, pos.X, pos.Y, x, y, p)
		m.pixels(pos)[y*gametest.ChunkSize+x] = p & components.PersistMask
	}
	_, ents := g.Crates(t)
	pmap, cmap := ecs.NewMap1[gametest.Position](g.W), ecs.NewMap1[gametest.Crate](g.W)
	for id, e := range ents {
		switch rng.IntN(3) {
		case 0:
			cmap.Get(e).HP++
			must(t, g.Pers.MarkDirty(e))
		case 1:
			p := pmap.Get(e)
			p.X += float64(rng.IntN(3)-1) * gametest.ChunkSize
			p.Y += float64(rng.IntN(3)-1) * gametest.ChunkSize
		}
		v := m.crates[id]
		v.X, v.Y, v.HP = pmap.Get(e).X, pmap.Get(e).Y, cmap.Get(e).HP
		m.crates[id] = v
	}
	pos := loaded[rng.IntN(len(loaded))]
	x, y := (float64(pos.X)+0.25)*gametest.ChunkSize, (float64(pos.Y)+0.75)*gametest.ChunkSize
	id := uint64(1000 + len(m.crates))
	g.SpawnCrate(x, y, id, len(m.crates))
	m.crates[id] = gametest.CrateView{X: x, Y: y, HP: len(m.crates), Tags: fmt.Sprint([]string{"wood", fmt.Sprint(len(m.crates))})}
	g.Tick()
}

// fileFaults fails every read of the files it names with EIO (an I/O
// error, not damage) while on.
type fileFaults struct {
	on    atomic.Bool
	files map[string]bool
	hit   atomic.Int64
}

func (f *fileFaults) Inject(op vfs.Op, name string) error {
	if op != vfs.OpRead || !f.on.Load() || !f.files[filepath.Clean(name)] {
		return nil
	}
	f.hit.Add(1)
	return &fs.PathError{Op: op.String(), Path: name, Err: syscall.EIO}
}

// TestLoadReadErrorDoesNotFallBack: an I/O error while a load reads the
// committed generation (its world file, its chunk store) is not damage:
// the load fails with that error, naming the file and saying it is not
// damage, the manifest still names the same generation and no backup is
// committed; once the fault is healed, the same load gives that
// generation exactly. Both ways of loading: Install with Load, and
// Persistence.Load of a running game.
func TestLoadReadErrorDoesNotFallBack(t *testing.T) {
	cases := []struct {
		name  string
		files func(t *testing.T, fsys vfs.FS) []string
	}{
		{"world file", func(*testing.T, vfs.FS) []string { return []string{"/save/world-3.pecs"} }},
		{"chunk store", func(t *testing.T, fsys vfs.FS) []string { return gametest.StoreFiles(t, fsys) }},
		{"chunk store data files", func(t *testing.T, fsys vfs.FS) []string {
			files := gametest.StoreFiles(t, fsys)[1:]
			expect(t, len(files) > 0, "the store has no data file")
			return files
		}},
	}
	for _, tc := range cases {
		for _, how := range []string{"install", "reload"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				mem, digests := gametest.ThreeGenerations(t)
				faults := &fileFaults{files: map[string]bool{}}
				for _, p := range tc.files(t, mem) {
					faults.files[p] = true
				}
				fsys := vfs.Faulty(mem, faults)
				var g *gametest.Game
				if how == "reload" {
					g = gametest.New(t, gametest.Opts{FS: fsys, Dir: "/save", Load: true, Radius: 1})
					g.Settle(t)
				}
				// Opening the directory removes what no manifest names: done
				// first, so that what follows compares the save's files.
				d, err := savedir.OpenDirReadOnly(mem, "/save")
				must(t, err)
				must(t, d.Close())
				before := gametest.Files(t, mem, "/save")

				faults.on.Store(true)
				if how == "install" {
					_, err = gametest.Install(t, gametest.Opts{FS: fsys, Dir: "/save", Load: true, Radius: 1})
				} else {
					err = g.Pers.Load("/save")
				}
				expect(t, faults.hit.Load() > 0, "no read failed")
				expect(t, err != nil, "the load succeeded while %s could not be read", tc.name)
				expect(t, errors.Is(err, syscall.EIO) && errors.Is(err, autosave.ErrUnreadable) && !errors.Is(err, arksave.ErrCorrupt),
					"the load's error does not match EIO and ErrUnreadable only: %v", err)
				named := false
				for p := range faults.files {
					named = named || strings.Contains(err.Error(), filepath.Base(p))
				}
				expect(t, named && strings.Contains(err.Error(), "not damage"), "the error names no file, or does not say it is not damage: %v", err)
				after := gametest.Files(t, mem, "/save")
				gametest.ExpectSameFiles(t, before, after)
				d, err = savedir.OpenDirReadOnly(mem, "/save")
				must(t, err)
				expect(t, d.Generation() == 3 && len(d.Backups()) == 2, "after the failed load: generation %d, %d backups", d.Generation(), len(d.Backups()))
				must(t, d.Close())

				// Healed, the same load gives generation 3 exactly.
				faults.on.Store(false)
				if how == "install" {
					g = gametest.New(t, gametest.Opts{FS: fsys, Dir: "/save", Load: true, Radius: 1})
				} else {
					must(t, g.Pers.Load("/save"))
				}
				g.Settle(t)
				expect(t, g.State().Fallback == nil && len(g.Pers.Problems()) == 0 && g.Pers.Generation() == 3,
					"healed: fallback %+v, problems %v, generation %d", g.State().Fallback, g.Pers.Problems(), g.Pers.Generation())
				expect(t, ecs.GetResource[gametest.Score](g.W).Points == 3 && g.ChunkDigest(t, 0, 0) == digests[3],
					"healed: score %d, chunk (0,0) is not generation 3's", ecs.GetResource[gametest.Score](g.W).Points)
			})
		}
	}
}

// TestFallbackStopsAtAnUnreadableBackup: when the committed generation is
// damaged and the newest backup cannot be read (EIO), the load fails with
// that error instead of going on to an older backup, and nothing is
// changed; healed, it falls back to the newest backup.
func TestFallbackStopsAtAnUnreadableBackup(t *testing.T) {
	mem, digests := gametest.ThreeGenerations(t)
	gametest.FlipAt(t, mem, "/save/world-3.pecs", 40)
	faults := &fileFaults{files: map[string]bool{"/save/backups/world-2.pecs": true}}
	fsys := vfs.Faulty(mem, faults)
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, d.Close())
	before := gametest.Files(t, mem, "/save")
	faults.on.Store(true)
	_, err = gametest.Install(t, gametest.Opts{FS: fsys, Dir: "/save", Load: true, Radius: 1})
	expect(t, errors.Is(err, syscall.EIO) && errors.Is(err, autosave.ErrUnreadable) && strings.Contains(err.Error(), "world-2.pecs"),
		"Install: %v", err)
	after := gametest.Files(t, mem, "/save")
	gametest.ExpectSameFiles(t, before, after)

	faults.on.Store(false)
	g := gametest.New(t, gametest.Opts{FS: fsys, Dir: "/save", Load: true, Radius: 1})
	g.Settle(t)
	fb := g.State().Fallback
	expect(t, fb != nil && fb.Damaged == 3 && fb.Loaded == 2, "healed: fallback %+v", fb)
	expect(t, g.ChunkDigest(t, 0, 0) == digests[2], "chunk (0,0) is not generation 2's")
}
