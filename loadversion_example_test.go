package arksave_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
)

// Every kept generation of a save loads: by number (arksave inspect lists
// them), or by time, the save the game had ten minutes ago. The generation
// loaded becomes current as a new generation; the ones after it stay as
// backups, so a second thought can load them again.
func ExamplePersistence_LoadVersion() {
	dir, _ := os.MkdirTemp("", "arksave-example-")
	defer os.RemoveAll(dir)
	world := ecs.NewWorld()
	score := &exampleScore{}
	ecs.AddResource(world, score)
	keep := &autosave.Config{Interval: 5 * time.Minute, Enabled: true, MaxBackups: 10}
	_, err := arksave.Plugin{Dir: dir, ChunkSize: 64, Autosave: keep}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	for points := 1; points <= 3; points++ {
		score.Points = points
		persistence.SaveNow() // generations 1, 2 and 3
	}

	if err := persistence.LoadVersion(dir, arksave.Version{Generation: 1}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("points:", score.Points, "generation:", persistence.Generation())
	for _, p := range persistence.Problems() { // "loaded generation 1 of <time> as generation 4; ..."
		fmt.Println("reported:", strings.Contains(p.Err.Error(), "loaded generation 1 of"), "damage:", errors.Is(p.Err, arksave.ErrCorrupt))
	}
	// Nothing was saved ten minutes ago: the error names the oldest generation kept.
	err = persistence.LoadVersion(dir, arksave.Version{At: time.Now().Add(-10 * time.Minute)})
	fmt.Println("ten minutes ago:", errors.Is(err, autosave.ErrNoGeneration))
	persistence.Close()

	// At start-up: the game continues from generation 3, which the load of
	// generation 1 kept as a backup.
	world = ecs.NewWorld()
	score = &exampleScore{}
	ecs.AddResource(world, score)
	_, err = arksave.Plugin{Dir: dir, ChunkSize: 64, Autosave: keep, LoadVersion: arksave.Version{Generation: 3}}.Install(world)
	if err != nil {
		fmt.Println(err)
		return
	}
	persistence = ecs.GetResource[arksave.Persistence](world)
	defer persistence.Close()
	fmt.Println("points:", score.Points, "generation:", persistence.Generation())
	// Output:
	// points: 1 generation: 4
	// reported: true damage: false
	// ten minutes ago: true
	// points: 3 generation: 5
}
