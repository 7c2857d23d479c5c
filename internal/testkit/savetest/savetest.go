// Package savetest builds real save directories for the tests of the save
// tools: a small game with the arksave plugin, terrain chunks from
// internal/terrain changed in every storage type, pixel bodies, several
// generations and backups. It also reads a save back as the game would,
// so that tests can compare chunk contents before and after an operation.
package savetest

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// The game's constants.
const (
	ChunkSize  = 32
	TileSize   = 8
	Seed       = 7
	MaxBackups = 2
	Radius     = 2 // chunks loaded around the player
)

// Generator is the game's chunk generator.
var Generator = terrain.Generator{Surface: 24}

// oldPath is the package path this kit had when the committed fixtures
// were written.
const oldPath = "github.com/arksave/arksave/internal/savetest"

// Game components and resources.
type (
	Position struct{ X, Y float64 }
	Player   struct{ Name string }
	Score    struct{ Points int }
)

// Game is the test game: a world, the plugin's systems and its
// Persistence.
type Game struct {
	W       *ecs.World
	Systems []arksave.System
	Pers    *arksave.Persistence
}

// Open installs the plugin over dir: loading the save there when load is
// set, else starting a new world.
func Open(dir string, load bool) (*Game, error) { return open(dir, load, -1) }

// open is Open with the plugin's autosave.Config.BackupCopyEvery.
func open(dir string, load bool, copyEvery int) (*Game, error) {
	return openEncoding(dir, load, copyEvery, chunkstore.EncodeDeltaFull)
}

// openEncoding is open with the plugin's chunk encoding.
func openEncoding(dir string, load bool, copyEvery int, enc chunkstore.Encoding) (*Game, error) {
	w := ecs.NewWorld()
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Player](w)
	ecs.AddResource(w, &Score{})
	systems, err := arksave.Plugin{
		Dir: dir, Load: load, Overwrite: !load,
		ChunkSize: ChunkSize, TileSize: TileSize, Seed: Seed, Generator: Generator,
		// The fixture's backups share the chunk store, the layout of saves
		// made before backups had stores of their own, which the tools'
		// tests read; backups with stores of their own are tested apart.
		Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: MaxBackups, BackupCopyEvery: copyEvery},
		// Delta and Full records where Build says so, as format 2 chose
		// them: the damage tests flip bytes of each kind.
		ChunkEncoding: enc,
		// The committed fixtures were written when this kit was
		// internal/savetest: their type registries name it so.
		WorldOptions: []archetype.Option{
			archetype.Alias(oldPath+".Position", ecs.C[Position]()),
			archetype.Alias(oldPath+".Player", ecs.C[Player]()),
			archetype.Alias(oldPath+".Score", ecs.C[Score]()),
		},
	}.Install(w)
	if err != nil {
		return nil, err
	}
	g := &Game{W: w, Systems: systems, Pers: ecs.GetResource[arksave.Persistence](w)}
	if !load {
		ecs.NewMap3[Position, Player, components.Focus](w).NewEntity(&Position{X: 1}, &Player{Name: "ada"}, &components.Focus{Radius: Radius})
	}
	return g, nil
}

// Tick runs the systems once.
func (g *Game) Tick() {
	for _, s := range g.Systems {
		s.Update(g.W)
	}
}

// Settle ticks until the chunks around the player are loaded.
func (g *Game) Settle() error {
	ix := ecs.GetResource[components.ChunkIndex](g.W)
	want := (2*Radius + 1) * (2*Radius + 1)
	for i := 0; i < 5000; i++ {
		g.Tick()
		if ix.Len() >= want {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("savetest: %d of %d chunks loaded", ix.Len(), want)
}

// Paint sets pixel (px, py) of loaded chunk (x, y) to p and marks the chunk
// dirty when it changed.
func (g *Game) Paint(x, y int32, px, py int, p components.Pixel) error {
	e, ok := ecs.GetResource[components.ChunkIndex](g.W).Get(components.ChunkPos{X: x, Y: y})
	if !ok {
		return fmt.Errorf("savetest: chunk %d,%d not loaded", x, y)
	}
	_, c, s := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](g.W).Get(e)
	if c.Set(px, py, p) {
		s.MarkDirty()
	}
	return nil
}

// Fill sets every pixel of loaded chunk (x, y) with fn(px, py).
func (g *Game) Fill(x, y int32, fn func(px, py int) components.Pixel) error {
	for py := range ChunkSize {
		for px := range ChunkSize {
			if err := g.Paint(x, y, px, py, fn(px, py)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Save saves now and waits for the commit and for what the writer does
// after it (the mirrors it grows, compaction), so that the directory's
// files stay as they are until the next save.
func (g *Game) Save() error {
	if r := g.Pers.SaveNow(); r.Err != nil {
		return r.Err
	}
	// What the writer does after the commit (the save's description,
	// compaction) is done too: a test that looks at the files next sees
	// them settled.
	g.Pers.WaitIdle()
	return nil
}

// Close releases the save directory.
func (g *Game) Close() error { return g.Pers.Close() }

// Build makes a save in dir (which must not hold one) with three
// generations, two of them backups: Delta, Full and Empty chunks, chunks
// reverted to generation, pixel bodies in two chunks, and ECS entities and
// a resource that change between generations.
//
// It leaves out the mirrors the writer grows in backups/ (savedir.MirrorName),
// as a save made before mirrors existed: the tools' tests of damage read
// and repair such a save record by record; saves with mirrors are tested
// apart.
func Build(dir string) error {
	if err := build(dir, -1, false); err != nil {
		return err
	}
	mirrors, err := filepath.Glob(filepath.Join(dir, savedir.BackupDir, "mirror-*"))
	for _, m := range mirrors {
		err = errors.Join(err, os.Remove(m))
	}
	return err
}

// BuildWithCopies writes into dir a save that an earlier writer made of
// the save Build makes, when it still copied the chunk store after each
// save (autosave.Config.BackupCopyEvery 1): every backup has a store of
// its own (backups/chunks-<G>.pxsw and its data files, named by
// backups/manifest-<G>), and the committed generation's copy waits in
// backups/ for the next save. The writer no longer makes such copies (it
// mirrors each file once instead); saves that have them still read
// exactly, and this committed fixture (testdata/legacy-copies) is how the
// tools' tests keep reading them.
func BuildWithCopies(dir string) error { return writeFixture("testdata/legacy-copies", dir) }

// BuildWithPlayers writes the save BuildWithCopies writes, with two
// players saved apart from the world (components.Player "ada" and "bob",
// each with a Position), bob moving in every generation, as that earlier
// writer made it: every backup has its own copy of the players
// (backups/players-<G>.pxpl and backups/players-<G>.pxpd, named by
// backups/manifest-<G>), and the committed generation's copy waits in
// backups/ (testdata/legacy-players).
func BuildWithPlayers(dir string) error { return writeFixture("testdata/legacy-players", dir) }

// BuildWithMirrors makes the save Build makes with the two players
// BuildWithPlayers has, as the writer makes it today: with the mirrors it
// grows after each save in backups/ (savedir.MirrorName), and backups that
// share the top level's files.
func BuildWithMirrors(dir string) error { return build(dir, -1, true) }

// FreshWithMirrors copies a save that BuildWithMirrors made, built once
// beside base (the save Main built), into a temporary directory of the
// test.
func FreshWithMirrors(t testing.TB, base string) string {
	t.Helper()
	return freshBeside(t, base, "mirrors", BuildWithMirrors)
}

//go:embed testdata/legacy-copies testdata/legacy-players testdata/pixel-2 testdata/pixel-8 testdata/pixel-8-misfit
var fixtures embed.FS

// writeFixture writes the committed save at src of fixtures into dir.
func writeFixture(src, dir string) error {
	return fs.WalkDir(fixtures, src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(p, src), "/")))
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := fixtures.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
}

func build(dir string, copyEvery int, players bool) error {
	g, err := open(dir, false, copyEvery)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.Settle(); err != nil {
		return err
	}
	var bob *Position
	if players {
		saved := ecs.NewMap2[components.Player, Position](g.W)
		saved.NewEntity(&components.Player{ID: "ada"}, &Position{X: 1, Y: 2})
		_, bob = saved.Get(saved.NewEntity(&components.Player{ID: "bob"}, &Position{}))
	}
	score := ecs.GetResource[Score](g.W)
	ids := ecs.GetResource[components.BodyIDs](g.W)
	bodies := ecs.NewMap2[components.PixelBody, components.Persistable](g.W)
	newBody := func(x, y float32, w, h uint32, rot float32, mat uint8) {
		b := components.PixelBody{ID: ids.New(), X: x, Y: y, Rotation: rot, VX: 1.5, VY: -2, Width: w, Height: h,
			OriginX: int32(w / 2), OriginY: int32(h / 2)}
		for i := range w * h {
			b.Pixels = append(b.Pixels, components.MakePixel(mat, uint8(i*37), 0, components.FlagPixelBody))
			b.Shape = append(b.Shape, i%7 != 3)
		}
		bodies.NewEntity(&b, &components.Persistable{})
	}
	steps := []func() error{
		func() error { // generation 1
			score.Points = 1
			for i := range 40 {
				if err := g.Paint(0, 0, i%ChunkSize, 5+i/ChunkSize, components.MakePixel(terrain.Water, uint8(i), 0, 0)); err != nil {
					return err
				}
			}
			if err := g.Fill(1, 0, func(px, py int) components.Pixel {
				return components.MakePixel(uint8(1+(px*py)%9), uint8(px+py), uint8(py), 0)
			}); err != nil {
				return err
			}
			if err := g.Fill(-1, 1, func(int, int) components.Pixel { return 0 }); err != nil {
				return err
			}
			newBody(40, 40, 5, 4, 0, terrain.Sand)
			return nil
		},
		func() error { // generation 2
			score.Points = 2
			ecs.NewMap1[Player](g.W).NewEntity(&Player{Name: "bob"})
			for i := range 30 {
				if err := g.Paint(0, 1, 3+i%20, 2+i/20, components.MakePixel(terrain.Sand, 2, 0, 0)); err != nil {
					return err
				}
			}
			if err := g.Paint(0, 0, 0, 0, components.MakePixel(9, 1, 0, 0)); err != nil {
				return err
			}
			newBody(-20, 50, 3, 3, 0.7, terrain.Stone)
			return nil
		},
		func() error { // generation 3
			score.Points = 3
			if err := g.Fill(-1, -1, func(px, py int) components.Pixel {
				return components.MakePixel(uint8(1+(px+py)%5), uint8(px), 0, 0)
			}); err != nil {
				return err
			}
			for i := range 12 {
				if err := g.Paint(1, 1, 2*i, 9, components.MakePixel(terrain.Water, 1, 0, 0)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
		if bob != nil {
			bob.X++
		}
		if err := g.Save(); err != nil {
			return err
		}
	}
	return nil
}

// Contents is what a save's committed generation holds, as the game reads
// it: every stored chunk's pixels (generated under Delta records) and every
// stored body set.
type Contents struct {
	Chunks map[chunkstore.Pos][]uint32
	Bodies map[chunkstore.Pos][]chunkstore.Body
}

// committed opens the save in dir, changing nothing, with its manifest.
func committed(dir string) (*savedir.Dir, *savedir.Manifest, error) {
	d, err := savedir.OpenDirReadOnly(nil, dir)
	if err != nil {
		return nil, nil, err
	}
	if d.Manifest() == nil {
		return nil, nil, d.ManifestErr()
	}
	return d, d.Manifest(), nil
}

// BuildTemp builds the save in a new temporary directory and returns its
// path and a function that removes it.
func BuildTemp() (string, func(), error) {
	tmp, err := os.MkdirTemp("", "savetest")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	dir := filepath.Join(tmp, "save")
	if err := Build(dir); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// Main runs a test binary's tests with a save built once for them: it
// sets *base to its directory, runs m and removes the save. Call it from
// TestMain: os.Exit(savetest.Main(m, &base)).
func Main(m *testing.M, base *string) int {
	dir, cleanup, err := BuildTemp()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the test save:", err)
		return 1
	}
	defer cleanup()
	*base = dir
	return m.Run()
}

// besides holds the saves built once beside a test binary's base save, by
// the name of their directory.
var besides struct {
	sync.Mutex
	saves map[string]*besideSave
}

type besideSave struct {
	once sync.Once
	dir  string
	err  error
}

// beside returns the directory of the save build makes, built once beside
// base (the save Main built) in the directory name, and removed with it.
func beside(base, name string, build func(dir string) error) (string, error) {
	besides.Lock()
	if besides.saves == nil {
		besides.saves = map[string]*besideSave{}
	}
	s := besides.saves[name]
	if s == nil {
		s = &besideSave{dir: filepath.Join(filepath.Dir(base), name)}
		besides.saves[name] = s
	}
	besides.Unlock()
	s.once.Do(func() { s.err = build(s.dir) })
	return s.dir, s.err
}

// freshBeside copies the save beside returns into a temporary directory of
// the test.
func freshBeside(t testing.TB, base, name string, build func(dir string) error) string {
	t.Helper()
	dir, err := beside(base, name, build)
	if err != nil {
		t.Fatal(err)
	}
	return Fresh(t, dir)
}

// WithCopies returns the directory of a save that BuildWithCopies made,
// built once beside base (the save Main built), and removed with it. Copy
// it with Fresh before changing it.
func WithCopies(base string) (string, error) { return beside(base, "copies", BuildWithCopies) }

// FreshWithCopies copies the save WithCopies returns into a temporary
// directory of the test.
func FreshWithCopies(t testing.TB, base string) string {
	t.Helper()
	return freshBeside(t, base, "copies", BuildWithCopies)
}

// FreshWithPlayers copies a save that BuildWithPlayers made, built once
// beside base (the save Main built), into a temporary directory of the
// test.
func FreshWithPlayers(t testing.TB, base string) string {
	t.Helper()
	return freshBeside(t, base, "players", BuildWithPlayers)
}

// Fresh copies the save at base into a temporary directory of the test.
func Fresh(t testing.TB, base string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "save")
	if err := CopyDir(base, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Read reads the committed generation of the save in dir through its
// manifest's root, with the game's generator.
func Read(dir string) (*Contents, error) {
	d, m, err := committed(dir)
	if err != nil {
		return nil, err
	}
	store, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	root := m.Chunks.Root
	if len(root) == 0 {
		if root, err = storetool.Tool.FindRoot(nil, store, m.Chunks.Generation); err != nil {
			return nil, err
		}
	}
	s, err := chunkstore.Open(store, &chunkstore.Options{ReadOnly: true, Generator: Generator, Root: root})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	c := &Contents{Chunks: map[chunkstore.Pos][]uint32{}, Bodies: map[chunkstore.Pos][]chunkstore.Body{}}
	var errs []error
	s.Entries(func(e chunkstore.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			b, err := s.Bodies(e.Pos)
			errs = append(errs, err)
			c.Bodies[e.Pos] = b
			return true
		}
		pix := make([]uint32, ChunkSize*ChunkSize)
		_, err := s.Get(e.Pos, pix)
		errs = append(errs, err)
		c.Chunks[e.Pos] = pix
		return true
	})
	return c, errors.Join(errs...)
}

// Diff compares two contents, leaving out the positions in skip, and
// describes the first difference, or returns "".
func Diff(got, want *Contents, skip ...chunkstore.Pos) string {
	for p, w := range want.Chunks {
		if slices.Contains(skip, p) {
			continue
		}
		g, ok := got.Chunks[p]
		if !ok {
			return fmt.Sprintf("chunk %v is missing", p)
		}
		if !slices.Equal(g, w) {
			return fmt.Sprintf("chunk %v differs", p)
		}
	}
	for p := range got.Chunks {
		if _, ok := want.Chunks[p]; !ok && !slices.Contains(skip, p) {
			return fmt.Sprintf("chunk %v is new", p)
		}
	}
	for p, w := range want.Bodies {
		if slices.Contains(skip, p) {
			continue
		}
		g := got.Bodies[p]
		if len(g) != len(w) {
			return fmt.Sprintf("bodies of %v: %d, want %d", p, len(g), len(w))
		}
		for i := range w {
			if g[i].ID != w[i].ID || g[i].X != w[i].X || !slices.Equal(g[i].Pixels, w[i].Pixels) || !slices.Equal(g[i].Shape, w[i].Shape) {
				return fmt.Sprintf("body %d of %v differs", w[i].ID, p)
			}
		}
	}
	return ""
}

// CopyDir copies the directory tree at src to dst.
func CopyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
