package autosave_test

import (
	"errors"
	"fmt"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/vfs"
)

// A writer opens the save directory and holds its lock; a reader opens it
// read-only meanwhile and sees the committed generation; a second writer
// is refused.
func ExampleOpenDirReadOnly() {
	fsys := vfs.NewMem()
	d, err := autosave.OpenDir(fsys, "/saves/world1")
	if err != nil {
		panic(err)
	}
	defer d.Close()
	_, _, err = d.Commit(autosave.Commit{World: []byte("the ECS world"),
		Chunks: autosave.StoreRef{Name: autosave.ChunksName, Generation: 1, Root: []byte("the store's root")}})
	if err != nil {
		panic(err)
	}

	r, err := autosave.OpenDirReadOnly(fsys, "/saves/world1")
	if err != nil {
		panic(err)
	}
	world, _ := r.ReadWorld(nil)
	fmt.Printf("a reader sees generation %d: %q\n", r.Generation(), world)
	_, err = autosave.OpenDir(fsys, "/saves/world1")
	fmt.Println("a second writer:", errors.Is(err, autosave.ErrLocked))
	// Output:
	// a reader sees generation 1: "the ECS world"
	// a second writer: true
}
