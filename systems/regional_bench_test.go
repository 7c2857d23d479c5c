package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
)

// Stats is a plain-old-data component of the benchmark's entities.
type Stats struct {
	HP, Kind int32
}

// BenchmarkSave_100kEntities_1000Chunks_5Dirty saves a world of 100,000
// entities spread over 1,000 chunks (100 each) after 5 of them changed, one
// in each of 5 chunks, by autosave (the save the game does not ask for):
// "regional", the entities are regional and the save writes the 5 chunks'
// entity sections and a world file without them; "global", the same
// entities are ordinary ones and the world file holds all of them. It
// reports the bytes a save writes, the world file's size, the entity sets
// written and the game loop's stall per save, beside the time per save
// (the tick that starts it, and its commit).
func BenchmarkSave_100kEntities_1000Chunks_5Dirty(b *testing.B) {
	for _, mode := range []string{"regional", "global"} {
		b.Run(mode, func(b *testing.B) {
			regionalMode := mode == "regional"
			w := ecs.NewWorld()
			ecs.ComponentID[Stats](w)
			systems, err := arksave.Plugin{
				Dir: b.TempDir(), ChunkSize: gametest.ChunkSize, TileSize: 8, Seed: 7, Generator: gametest.Gen{},
				Autosave:  &autosave.Config{Interval: arksave.DefaultTickDuration, Enabled: true},
				Positions: []arksave.RegionalPosition{gametest.PositionOf},
			}.Install(w)
			must(b, err)
			pers := ecs.GetResource[arksave.Persistence](w)
			defer pers.Close()
			tick := func() {
				for _, s := range systems {
					s.Update(w)
				}
			}
			ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{X: 16 * gametest.ChunkSize, Y: 16 * gametest.ChunkSize, Radius: 16})
			ix := ecs.GetResource[components.ChunkIndex](w)
			for ix.Len() < 33*33 {
				tick()
				pers.Wait()
				time.Sleep(time.Millisecond)
			}

			// 100 entities in each of 1,000 chunks.
			const perChunk, chunks = 100, 1000
			first := make([]ecs.Entity, chunks) // one entity of each chunk, to change
			reg := ecs.NewMap3[gametest.Position, Stats, components.Regional](w)
			glob := ecs.NewMap2[gametest.Position, Stats](w)
			for c := range chunks {
				cx, cy := float64(c%32)*gametest.ChunkSize, float64(c/32)*gametest.ChunkSize
				for i := range perChunk {
					p := gametest.Position{X: cx + float64(i%10)*3 + 1, Y: cy + float64(i/10)*3 + 1}
					s := Stats{HP: int32(i), Kind: int32(c)}
					var e ecs.Entity
					if regionalMode {
						e = reg.NewEntity(&p, &s, &components.Regional{ID: uint64(c*perChunk + i + 1)})
					} else {
						e = glob.NewEntity(&p, &s)
					}
					if i == 0 {
						first[c] = e
					}
				}
			}
			tick()
			must(b, pers.Wait().Err)
			if regionalMode {
				st := pers.RegionStats()
				expect(b, st.Entities == chunks*perChunk && st.Regions == chunks, "%+v", st)
			}

			stats := ecs.NewMap1[Stats](w)
			var bytes, worldBytes, regions int64
			var stall time.Duration
			saves := 0
			for b.Loop() {
				for c := range 5 {
					e := first[c*200]
					stats.Get(e).HP++
					if regionalMode {
						must(b, pers.MarkDirty(e))
					}
				}
				tick() // starts the autosave
				res := pers.Wait()
				if res == nil || res.Err != nil {
					b.Fatalf("autosave: %v", res)
				}
				if regionalMode && res.RegionsWritten != 5 {
					b.Fatalf("%d entity sets written, want 5", res.RegionsWritten)
				}
				bytes += res.BytesWritten
				worldBytes += res.WorldBytes
				regions += int64(res.RegionsWritten)
				stall += res.Stall
				saves++
			}
			b.ReportMetric(float64(bytes)/float64(saves), "bytes/save")
			b.ReportMetric(float64(worldBytes)/float64(saves), "world-bytes/save")
			b.ReportMetric(float64(regions)/float64(saves), "sets/save")
			b.ReportMetric(float64(stall.Microseconds())/float64(saves), "stall-µs/save")
		})
	}
}
