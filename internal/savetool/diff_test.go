package savetool_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// chunkLines describes a diff's chunks, one string each.
func chunkLines(r *savetool.DiffReport) []string {
	var out []string
	for _, c := range r.Chunks {
		out = append(out, fmt.Sprintf("(%d, %d) %s %s>%s %d%s", c.X, c.Y, c.Kind, c.From, c.To, c.Pixels, map[bool]string{true: "+"}[c.AtLeast]))
	}
	return out
}

func diff(t *testing.T, dir string, a, b uint64) *savetool.DiffReport {
	t.Helper()
	r, err := savetool.Diff(dir, a, b, savetool.Options{})
	must(t, err)
	return r
}

// The test save's generations differ by the chunks its build painted:
// generation 2 changed one pixel of (0, 0) and painted 30 of (0, 1),
// generation 3 filled (-1, -1) whole and painted 12 pixels of (1, 1).
func TestDiffChunksOfTheTestSave(t *testing.T) {
	for _, c := range []struct {
		a, b uint64
		want string
	}{
		{1, 2, "[(0, 0) changed delta>delta 1 (0, 1) added >delta 30]"},
		{2, 1, "[(0, 0) changed delta>delta 1 (0, 1) removed delta> 30]"},
		{2, 3, "[(-1, -1) added >full 0+ (1, 1) added >delta 12]"},
		{1, 0, "[(-1, -1) added >full 0+ (0, 0) changed delta>delta 1 (0, 1) added >delta 30 (1, 1) added >delta 12]"},
	} {
		r := diff(t, base, c.a, c.b)
		expect(t, fmt.Sprint(chunkLines(r)) == c.want, "diff %d %d: chunks %v, want %s", c.a, c.b, chunkLines(r), c.want)
		expect(t, len(r.Damaged) == 0, "diff %d %d: damaged %v", c.a, c.b, r.Damaged)
		expect(t, r.Shared > 0, "diff %d %d: no entry shared", c.a, c.b)
	}
	for g := uint64(1); g <= 3; g++ {
		r := diff(t, base, g, g)
		expect(t, r.IsEmpty(), "diff %d %d: %+v", g, g, r)
	}
}

// A store written whole again (compact --whole) holds every chunk in
// other records of other files: the diff decodes them all and finds
// nothing changed.
func TestDiffAfterWholeCompactionIsEmpty(t *testing.T) {
	dir := fresh(t)
	rep, err := savetool.Compact(dir, savetool.CompactOptions{Whole: true, MaxBackups: -1})
	must(t, err)
	expect(t, rep.NewStore != rep.OldStore, "compact --whole kept the store %s", rep.OldStore)
	r := diff(t, dir, 3, 0)
	expect(t, r.B == rep.Generation, "diff to generation %d, want %d", r.B, rep.Generation)
	expect(t, r.IsEmpty(), "a compacted copy differs: %v %v", chunkLines(r), r.Damaged)
	expect(t, r.Shared == 0, "%d entries shared between two stores", r.Shared)
}

// A generation the directory does not keep is refused, naming the kept
// ones.
func TestDiffGenerationNotKept(t *testing.T) {
	_, err := savetool.Diff(base, 1, 9, savetool.Options{})
	expect(t, errors.Is(err, autosave.ErrNoGeneration), "err %v", err)
	expect(t, err != nil && strings.Contains(err.Error(), "3 (committed), 2, 1"), "err %v does not name the kept generations", err)
}

// paintRegional sets pixel (px, py) of the loaded chunk (x, y) of the
// regional game to p and marks the chunk dirty.
func paintRegional(t *testing.T, g *savetest.RegionalGame, x, y int32, px, py int, p components.Pixel) {
	t.Helper()
	e, ok := ecs.GetResource[components.ChunkIndex](g.W).Get(components.ChunkPos{X: x, Y: y})
	expect(t, ok, "chunk %d,%d not loaded", x, y)
	_, c, s := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](g.W).Get(e)
	expect(t, c.Set(px, py, p), "pixel %d,%d of chunk %d,%d already %v", px, py, x, y, p)
	s.MarkDirty()
}

// diffSave makes a save of the regional game whose generations 1 and 2
// differ by what the test knows: the pixels it paints, the bodies and
// regional entities it moves, adds, removes and changes, a player and two
// entities of the world file.
func diffSave(t *testing.T) (dir string, bodies [3]uint64) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "save")
	g, err := savetest.OpenRegional(nil, dir, savetest.ChunkSize, savetest.Generator)
	must(t, err)
	defer g.Close()
	sand := components.MakePixel(terrain.Sand, 3, 0, 0)
	// Generation 1.
	for i := range 4 {
		paintRegional(t, g, 0, 0, i, 1, sand)
	}
	crate := g.Crate(101, 5, 5, "kept", ecs.Entity{})
	gone := g.Crate(102, 40, 5, "gone", ecs.Entity{})
	beacon := g.Beacon(103, -10, 5)
	bodies[0] = g.Body(10, 10)
	bodies[1] = g.Body(50, 10)
	players := ecs.NewMap2[components.Player, savetest.Crate](g.W)
	ada := players.NewEntity(&components.Player{ID: "ada"}, &savetest.Crate{Label: "ada's"})
	players.NewEntity(&components.Player{ID: "cy"}, &savetest.Crate{Label: "cy's"})
	world := ecs.NewMap1[savetest.Beacon](g.W)
	lamp := world.NewEntity(&savetest.Beacon{At: [2]float64{1, 2}})
	must(t, g.Save())

	// Generation 2.
	for i := range 3 {
		paintRegional(t, g, 1, 0, i, 2, sand)
	}
	for i := range 5 {
		paintRegional(t, g, -1, -1, i, 3, sand)
	}
	ecs.NewMap1[savetest.Crate](g.W).Get(crate).Label = "relabelled"
	g.W.RemoveEntity(gone)
	g.Crate(104, 20, 20, "new", ecs.Entity{})
	ecs.NewMap1[savetest.Beacon](g.W).Get(beacon).At = [2]float64{-10, 40} // into chunk (-1, 1)
	q := ecs.NewFilter1[components.PixelBody](g.W).Query()
	var drop ecs.Entity
	for q.Next() {
		switch b := q.Get(); uint64(b.ID) {
		case bodies[0]:
			b.X = 40 // into chunk (1, 0)
		case bodies[1]:
			drop = q.Entity()
		}
	}
	g.W.RemoveEntity(drop)
	bodies[2] = g.Body(-20, -20)
	ecs.NewMap1[savetest.Crate](g.W).Get(ada).Label = "ada's, changed"
	players.NewEntity(&components.Player{ID: "bob"}, &savetest.Crate{Label: "bob's"})
	world.Get(lamp).At = [2]float64{3, 4}
	world.NewEntity(&savetest.Beacon{At: [2]float64{5, 6}})
	must(t, g.Save())
	return dir, bodies
}

// lines describes every change of a diff, one string each.
func lines(r *savetool.DiffReport) []string {
	out := chunkLines(r)
	pos := func(p *savetool.DiffPos) string {
		if p == nil {
			return "-"
		}
		return p.String()
	}
	for _, b := range r.Bodies {
		out = append(out, fmt.Sprintf("body %d %s %s>%s", b.ID, b.Kind, pos(b.From), pos(b.To)))
	}
	for _, e := range r.Regional {
		out = append(out, fmt.Sprintf("entity %d %s %s>%s %v", e.ID, e.Kind, pos(e.From), pos(e.To), e.Components))
	}
	for _, p := range r.Players {
		out = append(out, fmt.Sprintf("player %s %s", p.ID, p.Kind))
	}
	for _, w := range r.World {
		out = append(out, fmt.Sprintf("world %v %s %v", w.Entity, w.Kind, w.Components))
	}
	for _, res := range r.Resources {
		out = append(out, fmt.Sprintf("resource %s %s", res.Name, res.Kind))
	}
	return out
}

// Every kind of change the regional game makes between two saves is
// reported, and nothing else: the chunks painted with their pixel counts,
// the bodies moved, removed and added, the regional entities changed,
// removed, added and moved into another chunk, the player changed and the
// one added, the world file's entity changed and the one added, and the
// resource that counts body ids. Backwards, every change turns around.
func TestDiffReportsWhatChanged(t *testing.T) {
	dir, bodies := diffSave(t)
	crate := "github.com/arksave/arksave/internal/testkit/savetest.Crate"
	beacon := "github.com/arksave/arksave/internal/testkit/savetest.Beacon"
	// Each change as it reads from 1 to 2, and from 2 to 1.
	changes := [][2]string{
		{"(-1, -1) added >delta 5", "(-1, -1) removed delta> 5"},
		{"(1, 0) added >delta 3", "(1, 0) removed delta> 3"},
		{"body %d moved (0, 0)>(1, 0)", "body %d moved (1, 0)>(0, 0)"},
		{"body %d removed (1, 0)>-", "body %d added ->(1, 0)"},
		{"body %d added ->(-1, -1)", "body %d removed (-1, -1)>-"},
		{"entity 101 changed (0, 0)>(0, 0) [" + crate + "]", "entity 101 changed (0, 0)>(0, 0) [" + crate + "]"},
		{"entity 102 removed (1, 0)>- []", "entity 102 added ->(1, 0) []"},
		{"entity 103 changed (-1, 0)>(-1, 1) [" + beacon + "]", "entity 103 changed (-1, 1)>(-1, 0) [" + beacon + "]"},
		{"entity 104 added ->(0, 0) []", "entity 104 removed (0, 0)>- []"},
		{"player ada changed", "player ada changed"},
		{"player bob added", "player bob removed"},
		{"world [19 0] changed [" + beacon + "]", "world [19 0] changed [" + beacon + "]"},
		{"world [21 0] added []", "world [21 0] removed []"},
		{"resource github.com/arksave/arksave/components.BodyIDs changed", "resource github.com/arksave/arksave/components.BodyIDs changed"},
	}
	for way, gens := range [][2]uint64{{1, 2}, {0, 1}} { // 0: the committed generation, 2
		var want []string
		for i, c := range changes {
			line := c[way]
			if i >= 2 && i < 5 {
				line = fmt.Sprintf(line, bodies[i-2])
			}
			want = append(want, line)
		}
		r := diff(t, dir, gens[0], gens[1])
		got := lines(r)
		expect(t, strings.Join(got, "\n") == strings.Join(want, "\n"), "diff %v:\n%s\nwant\n%s", gens, strings.Join(got, "\n"), strings.Join(want, "\n"))
		expect(t, len(r.Damaged) == 0, "damaged: %v", r.Damaged)
		expect(t, r.A+r.B == 3, "diff %v compared %d and %d", gens, r.A, r.B)
	}
	for _, g := range []uint64{1, 2} {
		r := diff(t, dir, g, g)
		expect(t, r.IsEmpty(), "diff %d %d: %v", g, g, lines(r))
	}
}

// A chunk record that does not read is reported as damaged, in the
// generation that holds it, and not as a change; a record both
// generations share is not read at all, so damage to it is no concern of
// a diff (check finds it).
func TestDiffDamagedChunk(t *testing.T) {
	dir := fresh(t)
	l := layoutOf(t, dir)
	changed, err := l.Record(savetest.DeltaChunk, chunkstore.Delta) // written by generation 3
	must(t, err)
	shared, err := l.Record(chunkstore.Pos{}, chunkstore.Delta) // written by generation 2, kept by 3
	must(t, err)
	expect(t, l.Backups[2][savetest.RecordKey(chunkstore.Pos{}, chunkstore.Delta)] == shared, "generation 2 does not share (0, 0)'s record")
	must(t, l.Flip(changed.Offset+int64(changed.Length)/2))
	must(t, l.Flip(shared.Offset+int64(shared.Length)/2))

	r := diff(t, dir, 2, 3)
	expect(t, fmt.Sprint(chunkLines(r)) == "[(-1, -1) added >full 0+]", "chunks %v", chunkLines(r))
	expect(t, len(r.Damaged) == 1 && r.Damaged[0].Generation == 3 && r.Damaged[0].What == "chunk (1, 1)", "damaged %+v", r.Damaged)
	expect(t, strings.Contains(r.Damaged[0].Err, "checksum mismatch"), "damage %q", r.Damaged[0].Err)
	expect(t, !r.IsEmpty(), "a diff with damage is empty")
}

// A world file or a player's record that does not read is reported as
// damaged, and its changes are not listed.
func TestDiffDamagedWorldAndPlayer(t *testing.T) {
	dir, _ := diffSave(t)
	must(t, savetest.FlipMiddle(filepath.Join(dir, "backups", "world-1.pecs")))
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	p, err := d.ReadPlayers(nil)
	must(t, err)
	ada, ok := p.Find("ada")
	expect(t, ok, "no ada in generation 2")
	must(t, savetest.Flip(filepath.Join(dir, p.Ref.Data), ada.Offset+int64(ada.Length)/2))

	r := diff(t, dir, 1, 2)
	var damaged []string
	for _, d := range r.Damaged {
		damaged = append(damaged, fmt.Sprintf("%d %s", d.Generation, d.What))
	}
	expect(t, fmt.Sprint(damaged) == `[2 player "ada" 1 world file]`, "damaged %v", damaged)
	expect(t, len(r.World) == 0 && len(r.Resources) == 0, "world changes listed from a damaged world file: %v %v", r.World, r.Resources)
	expect(t, fmt.Sprint(r.Players) == "[{bob added}]", "players %v", r.Players)
	expect(t, len(r.Chunks) == 2 && len(r.Bodies) == 3 && len(r.Regional) == 4, "the chunks' changes: %v", lines(r))
}

// A generation whose chunk store does not open is listed as damaged; its
// world and players are still compared.
func TestDiffStoreThatDoesNotOpen(t *testing.T) {
	dir := savetest.FreshWithCopies(t, base)
	must(t, os.Remove(filepath.Join(dir, "backups", "chunks-2-data-1.pxsd")))
	r := diff(t, dir, 2, 3)
	expect(t, len(r.Damaged) == 1 && r.Damaged[0].Generation == 2 && r.Damaged[0].What == "chunk store backups/chunks-2.pxsw", "damaged %+v", r.Damaged)
	expect(t, len(r.Chunks) == 0 && r.Shared == 0, "chunks compared with a store that does not open: %v", lines(r))
	expect(t, fmt.Sprint(lines(r)) == "[resource github.com/arksave/arksave/internal/testkit/savetest.Score changed]", "changes %v", lines(r))
}
