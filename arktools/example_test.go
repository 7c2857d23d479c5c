package arktools_test

import (
	"fmt"
	"os"

	"github.com/mlange-42/ark-tools/app"
	"github.com/mlange-42/ark-tools/resource"
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
)

// arksave under ark-tools' scheduler: the plugin's systems run after the game's in an app.App.
// A save keeps the app's Tick and Rand (its *rand.PCG state) and the game's resources; loading
// it puts them back, so the game goes on exactly as it would have from the save.
func Example() {
	dir, _ := os.MkdirTemp("", "arktools-example-")
	defer os.RemoveAll(dir)

	a := app.New().Seed(42)
	prepare(a.World, gameStart())
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: 64}.Install(a.World)
	if err != nil {
		fmt.Println(err)
		return
	}
	a.AddSystem(&weatherSystem{})
	for _, s := range systems {
		a.AddSystem(s)
	}
	persistence := ecs.GetResource[arksave.Persistence](a.World)
	defer persistence.Close()

	a.Initialize()
	for range 30 {
		a.Update()
	}
	if res := persistence.SaveNow(); res.Err != nil {
		fmt.Println(res.Err)
		return
	}
	tick := ecs.GetResource[resource.Tick](a.World)
	cal := ecs.GetResource[Calendar](a.World)
	src := ecs.GetResource[resource.Rand](a.World)
	fmt.Println("saved at tick", tick.Tick, "day", cal.Day)
	next := src.Uint64() // what the source gives after the save

	for range 10 { // play on, then load the save
		a.Update()
	}
	if err := persistence.Load(dir); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("loaded: tick", tick.Tick, "day", cal.Day, "same random numbers:", src.Uint64() == next)
	a.Finalize()
	// Output:
	// saved at tick 30 day 30
	// loaded: tick 30 day 30 same random numbers: true
}
