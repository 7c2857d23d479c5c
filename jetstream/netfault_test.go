package jetstream_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/jetstream"
)

// Network faults: the connection dropped while a save is on the wire
// fails that save (autosave.State says so), nothing of it is visible as a
// generation, and the next save commits.
func TestConnectionDroppedDuringSave(t *testing.T) {
	s := startServer(t)
	p := startProxy(t, s.Addr().String())
	g, err := savetest.Open("nats://"+p.l.Addr().String()+"/netfault?timeout=1s", false)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())
	must(t, g.Save())
	reader := connectFS(t, s.ClientURL(), jetstream.Options{})
	generation := func() uint64 {
		t.Helper()
		r, err := savetool.Check("netfault", savetool.Options{FS: reader})
		must(t, err)
		expect(t, r.OK(), "the save has problems: %v", r.Problems)
		return r.Manifest.Generation
	}
	state := ecs.GetResource[autosave.State](g.W)
	for round := 0; round < 3; round++ {
		committed := generation()
		must(t, g.Paint(0, 0, round, 3, components.MakePixel(3, uint8(round), 0, 0)))
		p.pause()
		h := g.Pers.Save()
		for !state.InProgress {
			g.Tick()
		}
		p.waitHeld() // the save is on the wire
		p.drop()
		p.resume()
		for !h.IsComplete() {
			g.Tick()
		}
		expect(t, state.LastResult != nil && state.LastResult.Err != nil, "round %d: the save over a dropped connection did not fail: %+v", round, state.LastResult)
		expect(t, generation() == committed, "round %d: a failed save changed the generation", round)
		expect(t, !strings.Contains(fmt.Sprint(state.LastResult.Err), "lost the lock"), "round %d: the writer lost its lock: %v", round, state.LastResult.Err)
		must(t, g.Save())
		expect(t, state.LastResult.Err == nil && generation() == committed+1, "round %d: the next save did not commit", round)
	}
}
