package arksave_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/internal/testkit/killtest"
	"github.com/arksave/arksave/vfs"
)

// The kill test runs save cycles in a child process (this test binary with
// ARKSAVE_KILL_CHILD set) and kills it with SIGKILL at random instants. The
// child prints "begin G D" before it saves generation G whose state has
// digest D, and "done G D" once the save returned. After every kill the
// directory must load, be intact according to the checker, and hold exactly
// the last generation that returned or the one that was being saved: its
// chunks, bodies, regional crates and players, none duplicated nor lost.

const killEnv = "ARKSAVE_KILL_CHILD"

func TestKillChild(t *testing.T) {
	dir := os.Getenv(killEnv)
	if dir == "" {
		t.Skip("helper process for TestKillDuringSaves")
	}
	_, err := os.Stat(filepath.Join(dir, savedir.ManifestName))
	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: err == nil, Radius: 1, Prepare: gametest.RegisterPlayers})
	g.Settle(t)
	killtest.Child(func() (uint64, uint64) {
		gen := g.Pers.Generation() + 1
		mutate(g, t, gen)
		return gen, digest(g, t)
	}, func() (uint64, error) {
		r := g.Pers.SaveNow()
		return r.Generation, r.Err
	})
}

// mutate changes the world in a way that depends on the generation: the
// score, the player's position, a pixel in one of three chunks, a body, a
// regional crate (spawned, moved across a border, removed now and then),
// and two players (one stays, one is saved and leaves).
func mutate(g *gametest.Game, t testing.TB, gen uint64) {
	mutateRegional(g, t, gen)
	ecs.GetResource[gametest.Score](g.W).Points = int(gen)
	// (Crates move within the loaded chunks: see mutateRegional.)
	q := ecs.NewFilter1[gametest.Position](g.W).Without(ecs.C[components.Regional]()).Query()
	for q.Next() {
		q.Get().Y = float64(gen) / 2
	}
	x := int32(gen%3) - 1
	g.Paint(t, x, 0, int(gen*7)%gametest.ChunkSize, int(gen*3)%gametest.ChunkSize, components.MakePixel(uint8(gen), 1, 2, 0))
	ids := ecs.GetResource[components.BodyIDs](g.W)
	b := components.PixelBody{ID: ids.New(), X: float32(gen % gametest.ChunkSize), Y: 3, Width: 1, Height: 1,
		Pixels: []components.Pixel{components.Pixel(gen)}, Shape: []bool{true}}
	if gen%4 == 0 { // now and then the bodies go
		rm := []ecs.Entity{}
		bq := ecs.NewFilter1[components.PixelBody](g.W).Query()
		for bq.Next() {
			rm = append(rm, bq.Entity())
		}
		for _, e := range rm {
			g.W.RemoveEntity(e)
		}
	}
	g.Bodies.NewEntity(&b, &components.Persistable{})
}

// digest hashes what a save holds: the score, positions, the chunks around
// the origin, and the bodies (in id order).
func digest(g *gametest.Game, t testing.TB) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, ecs.GetResource[gametest.Score](g.W).Points)
	// Global entities keep their ids; crates and players are compared by
	// stable id below.
	q := ecs.NewFilter1[gametest.Position](g.W).Without(ecs.C[components.Regional](), ecs.C[components.Player]()).Query()
	for q.Next() {
		fmt.Fprint(h, q.Entity(), *q.Get())
	}
	for y := int32(-1); y <= 1; y++ {
		for x := int32(-1); x <= 1; x++ {
			fmt.Fprint(h, g.ChunkDigest(t, x, y))
		}
	}
	var bodies []string
	bq := ecs.NewFilter1[components.PixelBody](g.W).Query()
	for bq.Next() {
		b := bq.Get()
		bodies = append(bodies, fmt.Sprint(b.ID, b.X, b.Y, b.Pixels))
	}
	sortStrings(bodies)
	fmt.Fprint(h, bodies)
	fmt.Fprint(h, regionalDigest(g, t))
	return h.Sum64()
}

// mutateRegional changes the crates and players for generation gen.
func mutateRegional(g *gametest.Game, t testing.TB, gen uint64) {
	if gen%4 == 0 {
		_, ents := g.Crates(t)
		for _, e := range ents {
			g.W.RemoveEntity(e)
		}
	}
	g.SpawnCrate(float64(int(gen%3)-1)*gametest.ChunkSize+float64(gen%20), 5, 1000+gen, int(gen))
	_, ents := g.Crates(t)
	for id, e := range ents {
		p := ecs.NewMap1[gametest.Position](g.W).Get(e)
		p.Y = 5 + float64(gen%20) // within the chunk: saved by the save the test asks for
		if id%2 == 1 {            // odd crates wander between chunks 0 and 1
			p.X = float64(gen%2)*gametest.ChunkSize + 15
		}
	}
	for _, id := range []string{"ada", "bob"} {
		if g.InventoryOf(t, id) == "" {
			if _, err := g.Pers.LoadPlayer(id); errors.Is(err, arksave.ErrNoPlayer) {
				g.SpawnPlayer(id, 1, 1, 0)
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	q := ecs.NewFilter2[components.Player, gametest.Inventory](g.W).Query()
	for q.Next() {
		_, inv := q.Get()
		inv.Gold = int(gen)
		inv.Items = append(inv.Items, fmt.Sprint(gen))
	}
	if gen%2 == 0 { // bob leaves, saved
		_, err := g.Pers.SavePlayer("bob")
		must(t, err)
		g.RemovePlayer("bob")
	}
}

// regionalDigest describes the loaded crates and both players (loading
// those that are not in the world).
func regionalDigest(g *gametest.Game, t testing.TB) string {
	for _, id := range []string{"ada", "bob"} {
		if g.InventoryOf(t, id) == "" {
			if _, err := g.Pers.LoadPlayer(id); err != nil && !errors.Is(err, arksave.ErrNoPlayer) {
				t.Fatal(err)
			}
		}
	}
	return gametest.CrateDigest(t, g) + g.InventoryOf(t, "ada") + g.InventoryOf(t, "bob")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestKillDuringSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process 200 times")
	}
	kills := 200
	if s := os.Getenv("ARKSAVE_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	dir := filepath.Join(t.TempDir(), "save")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var acked killtest.Acked
	midSave := 0
	for i := 0; i < kills; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killEnv+"="+dir)
		cmd.Stderr = os.Stderr
		said := killtest.Kill(t, cmd, time.Duration(rng.IntN(40000))*time.Microsecond)
		if said.MidSave {
			midSave++
		}
		acked.Heard(said)

		// The directory is intact and loads a generation that is the last one
		// that returned, or the one being saved at the kill.
		if r, err := savetool.Check(dir, savetool.Options{}); (err != nil || !r.OK()) && acked.Gen > 0 {
			t.Fatalf("kill %d: checker: %v %v %s", i, err, r, killtest.Keep(dir))
		}
		g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: true, Create: true, Radius: 1, Prepare: gametest.RegisterPlayers})
		g.Settle(t)
		gen, d := g.Pers.Generation(), digest(g, t)
		g.Pers.Close()
		if err := acked.Judge(said, gen, d); err != nil {
			t.Fatalf("kill %d: %v %s", i, err, killtest.Keep(dir))
		}
	}
	t.Logf("%d kills, %d of them during a save; %d generations committed", kills, midSave, acked.Gen)
	expect(t, midSave > kills/4, "only %d of %d kills hit a save in progress", midSave, kills)
}
