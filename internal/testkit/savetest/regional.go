package savetest

import (
	"fmt"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// Components of the regional game: regional entities that are not pixel
// bodies. A crate stands at its X and Y (fields a map finds by itself), a
// beacon at an array a map cannot read unless told, and a link points at
// another entity.
type (
	Crate struct {
		X, Y  float64
		Label string
	}
	Beacon struct{ At [2]float64 }
	Link   struct{ To ecs.Entity }
)

// RegionalGame is a game with the plugin whose chunks hold regional
// entities of the kinds above besides pixel bodies, 3x3 chunks loaded
// around the origin.
type RegionalGame struct {
	W       *ecs.World
	Systems []arksave.System
	Pers    *arksave.Persistence
}

// OpenRegional starts a new regional game in dir on fsys (nil: the real
// file system), with chunks of chunkSize pixels from gen, and ticks until
// the chunks around the origin are loaded. Close releases the directory.
func OpenRegional(fsys vfs.FS, dir string, chunkSize int, gen chunkstore.Generator) (*RegionalGame, error) {
	w := ecs.NewWorld()
	ecs.ComponentID[Crate](w)
	ecs.ComponentID[Beacon](w)
	ecs.ComponentID[Link](w)
	systems, err := arksave.Plugin{Dir: dir, FS: fsys, ChunkSize: chunkSize, TileSize: TileSize, Seed: Seed, Generator: gen,
		Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: MaxBackups},
		Positions: []arksave.RegionalPosition{
			arksave.Position(func(c *Crate) (float64, float64) { return c.X, c.Y }),
			arksave.Position(func(b *Beacon) (float64, float64) { return b.At[0], b.At[1] }),
		},
	}.Install(w)
	if err != nil {
		return nil, err
	}
	g := &RegionalGame{W: w, Systems: systems, Pers: ecs.GetResource[arksave.Persistence](w)}
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 1})
	ix := ecs.GetResource[components.ChunkIndex](w)
	for i := 0; i < 5000 && ix.Len() < 9; i++ {
		g.Tick()
		time.Sleep(time.Millisecond)
	}
	if ix.Len() < 9 {
		g.Close()
		return nil, fmt.Errorf("savetest: %d of 9 chunks loaded", ix.Len())
	}
	return g, nil
}

// Tick runs the systems once.
func (g *RegionalGame) Tick() {
	for _, s := range g.Systems {
		s.Update(g.W)
	}
}

// Save ticks once, so that the plugin places new regional entities in
// their chunks, then saves and waits for the commit.
func (g *RegionalGame) Save() error {
	g.Tick()
	return g.Pers.SaveNow().Err
}

// Close releases the save directory.
func (g *RegionalGame) Close() error { return g.Pers.Close() }

// Crate adds a crate with stable id id at (x, y), linked to to.
func (g *RegionalGame) Crate(id uint64, x, y float64, label string, to ecs.Entity) ecs.Entity {
	return ecs.NewMap3[Crate, Link, components.Regional](g.W).NewEntity(&Crate{X: x, Y: y, Label: label}, &Link{To: to}, &components.Regional{ID: id})
}

// Beacon adds a beacon with stable id id at (x, y).
func (g *RegionalGame) Beacon(id uint64, x, y float64) ecs.Entity {
	return ecs.NewMap2[Beacon, components.Regional](g.W).NewEntity(&Beacon{At: [2]float64{x, y}}, &components.Regional{ID: id})
}

// Body adds a persistable pixel body of 2x2 sand pixels at (x, y) and
// returns its id.
func (g *RegionalGame) Body(x, y float32) uint64 {
	b := components.PixelBody{ID: ecs.GetResource[components.BodyIDs](g.W).New(), X: x, Y: y, Width: 2, Height: 2,
		Pixels: make([]components.Pixel, 4), Shape: []bool{true, true, true, true}}
	for i := range b.Pixels {
		b.Pixels[i] = components.MakePixel(4, 1, 0, components.FlagPixelBody)
	}
	ecs.NewMap2[components.PixelBody, components.Persistable](g.W).NewEntity(&b, &components.Persistable{})
	return uint64(b.ID)
}
