package jetstream_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/killtest"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/jetstream"
)

// The kill test runs a game that saves to a world in JetStream in a child
// process (this test binary with killEnv set to the world's location) and
// kills it with SIGKILL at random instants (the protocol of package
// killtest); the server runs in the test's own process and outlives every
// child. After every kill the world must pass the checker and load exactly
// the last acknowledged generation, or the one that was being saved when
// the kill came.

const (
	killEnv     = "ARKSAVE_JETSTREAM_KILL_CHILD"
	killLoadEnv = "ARKSAVE_JETSTREAM_KILL_LOAD"
)

func TestKillChild(t *testing.T) {
	location := os.Getenv(killEnv)
	if location == "" {
		t.Skip("helper process for TestKillDuringSaves")
	}
	g, err := savetest.Open(location, os.Getenv(killLoadEnv) != "")
	must(t, err)
	must(t, g.Settle())
	killtest.Child(func() (uint64, uint64) {
		gen := g.Pers.Generation() + 1
		must(t, mutate(g, gen))
		return gen, digest(g)
	}, func() (uint64, error) {
		r := g.Pers.SaveNow()
		return r.Generation, r.Err
	})
}

// mutate changes the world in a way that depends on the generation: the
// score, the player's position and a pixel in one of three chunks.
func mutate(g *savetest.Game, gen uint64) error {
	ecs.GetResource[savetest.Score](g.W).Points = int(gen)
	q := ecs.NewFilter1[savetest.Position](g.W).Query()
	for q.Next() {
		q.Get().Y = float64(gen) / 2
	}
	x := int32(gen%3) - 1
	return g.Paint(x, 0, int(gen*7)%savetest.ChunkSize, int(gen*3)%savetest.ChunkSize, components.MakePixel(uint8(gen), 1, 2, 0))
}

// digest hashes what a save holds of the game: the score, the positions and
// the persisted layers of every loaded chunk, in position order.
func digest(g *savetest.Game) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, ecs.GetResource[savetest.Score](g.W).Points)
	q := ecs.NewFilter1[savetest.Position](g.W).Query()
	for q.Next() {
		fmt.Fprint(h, q.Entity(), *q.Get())
	}
	ix := ecs.GetResource[components.ChunkIndex](g.W)
	chunks := ecs.NewMap1[components.Chunk](g.W)
	for y := int32(-savetest.Radius); y <= savetest.Radius; y++ {
		for x := int32(-savetest.Radius); x <= savetest.Radius; x++ {
			e, ok := ix.Get(components.ChunkPos{X: x, Y: y})
			if !ok {
				fmt.Fprint(h, "absent", x, y)
				continue
			}
			for _, p := range chunks.Get(e).Pixels() {
				v := uint32(p) & components.PersistMask
				h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
			}
		}
	}
	return h.Sum64()
}

func TestKillDuringSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process 40 times")
	}
	kills := 40
	if s := os.Getenv("ARKSAVE_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	s := startServer(t)
	// The next program takes the world over from the killed one at once.
	location := s.ClientURL() + "/killed?steal=true"
	reader := connectFS(t, s.ClientURL(), jetstream.Options{})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	var acked killtest.Acked
	midSave := 0
	for i := 0; i < kills; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killEnv+"="+location)
		if acked.Gen > 0 {
			cmd.Env = append(cmd.Env, killLoadEnv+"=1")
		}
		cmd.Stderr = os.Stderr
		said := killtest.Kill(t, cmd, time.Duration(rng.IntN(60000))*time.Microsecond)
		if said.MidSave {
			midSave++
		}
		acked.Heard(said)

		// The world is intact and loads the last acknowledged generation, or
		// the one being saved at the kill.
		if r, err := savetool.Check("killed", savetool.Options{FS: reader}); (err != nil || !r.OK()) && acked.Gen > 0 {
			t.Fatalf("kill %d: checker: %v %v", i, err, r)
		}
		g, err := savetest.Open(location, true)
		if errors.Is(err, arksave.ErrNoSave) && acked.Gen == 0 {
			continue // nothing committed yet: the next child starts the world anew
		}
		must(t, err)
		must(t, g.Settle())
		gen, d := g.Pers.Generation(), digest(g)
		must(t, g.Close())
		if err := acked.Judge(said, gen, d); err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
	}
	t.Logf("%d kills, %d of them during a save; %d generations committed", kills, midSave, acked.Gen)
	expect(t, midSave > kills/4, "only %d of %d kills hit a save in progress", midSave, kills)
}
