package autosave_test

import (
	"errors"
	"fmt"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/vfs"
)

// A game configures autosave with the Config resource and reads its
// progress from the State resource; a second game on the same save is
// refused with ErrLocked.
func Example() {
	fsys := vfs.NewMem()
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: "/saves/world1", FS: fsys,
		Autosave: &autosave.Config{Interval: 2 * arksave.DefaultTickDuration, Enabled: true, MaxBackups: 1}}.Install(w)
	if err != nil {
		panic(err)
	}
	p := ecs.GetResource[arksave.Persistence](w)
	defer p.Close()

	for range 3 { // two ticks make the interval: the autosave starts
		for _, s := range systems {
			s.Update(w)
		}
	}
	p.Wait()
	state := ecs.GetResource[autosave.State](w)
	fmt.Println("saves:", state.Saves, "generation:", state.LastResult.Generation, "error:", state.LastResult.Err)

	_, err = arksave.Plugin{Dir: "/saves/world1", FS: fsys}.Install(ecs.NewWorld())
	var le *autosave.LockedError
	fmt.Println("second game locked out:", errors.Is(err, autosave.ErrLocked), errors.As(err, &le))
	// Output:
	// saves: 1 generation: 1 error: <nil>
	// second game locked out: true true
}
