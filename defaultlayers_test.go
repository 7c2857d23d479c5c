package arksave_test

import (
	"fmt"
	"testing"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
)

// The default layers keep what components.PersistMask keeps.
func TestDefaultLayersKeepPersistMask(t *testing.T) {
	got := chunkstore.LayerMask(arksave.DefaultLayers())
	expect(t, got == components.PersistMask, "default layers keep %08x, PersistMask %08x", got, uint32(components.PersistMask))
}

// The layers the plugin registers unless the game gives its own.
func ExampleDefaultLayers() {
	for _, l := range arksave.DefaultLayers() {
		fmt.Printf("%s: bits %d..%d saved %v\n", l.Name, l.Offset, int(l.Offset)+int(l.Bits)-1, l.Persist)
	}
	// Output:
	// material: bits 0..7 saved true
	// color: bits 8..15 saved true
	// damage: bits 16..23 saved true
	// pixel-body-flag: bits 24..24 saved true
	// simulation-flags: bits 25..31 saved false
}
