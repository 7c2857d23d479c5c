package systems_test

import (
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// A chunk that holds 100,000 regional entities saves and loads whole: its
// entity block is one record of several megabytes, past the seed's entity
// blob bounds (64 KiB target, 256 KiB hard maximum), which the store
// answers with bounded data files instead (a record larger than a data
// file gets one of its own; docs/format.md, "Size bounds").
func TestChunkWithHundredThousandEntities(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 entities: not with -short")
	}
	const n = 100_000
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	for i := range n {
		// All in chunk (1, 1): world pixels 32..63.
		g.SpawnCrate(33+float64(i%29), 33+float64(i/29%29), 0, i)
	}
	g.Tick()
	want := gametest.CrateDigest(t, g)
	crates, _ := g.Crates(t)
	expect(t, len(crates) == n, "%d crates spawned", len(crates))
	must(t, g.Pers.SaveNow().Err)
	block := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1})
	expect(t, len(block.Sections) > 0, "chunk (1,1) stored no entity section")
	must(t, g.Pers.Close())

	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	defer h.Pers.Close()
	h.MoveFocus(t, 0, 0)
	got, _ := h.Crates(t)
	expect(t, len(got) == n, "%d crates after the load, want %d", len(got), n)
	expect(t, gametest.CrateDigest(t, h) == want, "the crates differ after the load")
	expect(t, len(h.Pers.Problems()) == 0, "problems: %v", h.Pers.Problems())
}
