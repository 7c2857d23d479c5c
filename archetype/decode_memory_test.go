//go:build !arksave_nolinkname

// Built without the link to Ark's batch creation, Decode grows tables as Ark's public calls do,
// so this file's figure does not apply there.

package archetype_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// shapedWorld has n entities: Position and Velocity on all, Health on half, a Name on one in
// ten, the shape the codec's figures are stated for. It returns the world and its component
// bytes.
func shapedWorld(n int) (*ecs.World, int) {
	w := ecs.NewWorld()
	registerAll(w)
	pv := ecs.NewMap2[Position, Velocity](w)
	pvh := ecs.NewMap3[Position, Velocity, Health](w)
	pvhn := ecs.NewMap4[Position, Velocity, Health, Name](w)
	comp := 0
	for i := range n {
		p, v := Position{float64(i), 1}, Velocity{1, float64(i)}
		switch {
		case i%10 == 0:
			pvhn.NewEntity(&p, &v, &Health{int32(i), 100}, &Name{fmt.Sprint("e", i)})
			comp += 16 + 16 + 8 + 16
		case i%2 == 0:
			pvh.NewEntity(&p, &v, &Health{int32(i), 100})
			comp += 16 + 16 + 8
		default:
			pv.NewEntity(&p, &v)
			comp += 16 + 16
		}
	}
	return w, comp
}

// decodeGarbage decodes data into a prepared world and returns the bytes Decode allocated
// that are not live afterwards: its own buffers and the arrays Ark's tables left behind.
func decodeGarbage(t *testing.T, data []byte) int64 {
	t.Helper()
	target := ecs.NewWorld()
	registerAll(target)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), target), "Decode")
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(target)
	return int64(after.TotalAlloc-before.TotalAlloc) - max(int64(after.HeapAlloc)-int64(before.HeapAlloc), 0)
}

// Decode sizes each of Ark's tables once from the file's counts: the memory it leaves behind is
// a fraction of the world's component bytes, where creating entity by entity lets every table
// double its capacity again and again and leaves the old arrays behind.
func TestDecodeSizesTablesOnce(t *testing.T) {
	w, comp := shapedWorld(40_000)
	data := encode(t, w)
	batch := decodeGarbage(t, data)
	archetype.PublicCreation(t)
	public := decodeGarbage(t, data)
	t.Logf("component bytes %d; garbage: batch %d (%.2fx), entity by entity %d (%.2fx)",
		comp, batch, float64(batch)/float64(comp), public, float64(public)/float64(comp))
	if float64(batch) > 0.75*float64(comp) {
		t.Errorf("Decode left %d bytes of garbage, more than 0.75x the %d component bytes", batch, comp)
	}
	if 2*batch > public {
		t.Errorf("Decode left %d bytes of garbage, entity-by-entity creation %d: tables are not sized once", batch, public)
	}
}
