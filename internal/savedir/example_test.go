package savedir_test

import (
	"errors"
	"fmt"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// A writer opens the save directory and holds its lock; a reader opens it
// read-only meanwhile and sees the committed generation; a second writer
// is refused.
func ExampleOpenDirReadOnly() {
	fsys := vfs.NewMem()
	d, err := savedir.OpenDir(fsys, "/saves/world1")
	if err != nil {
		panic(err)
	}
	defer d.Close()
	_, _, err = d.Commit(savedir.Commit{World: []byte("the ECS world"),
		Chunks: savedir.StoreRef{Name: savedir.ChunksName, Generation: 1, Root: []byte("the store's root")}})
	if err != nil {
		panic(err)
	}

	r, err := savedir.OpenDirReadOnly(fsys, "/saves/world1")
	if err != nil {
		panic(err)
	}
	world, _ := r.ReadWorld(nil)
	fmt.Printf("a reader sees generation %d: %q\n", r.Generation(), world)
	_, err = savedir.OpenDir(fsys, "/saves/world1")
	fmt.Println("a second writer:", errors.Is(err, autosave.ErrLocked))
	// Output:
	// a reader sees generation 1: "the ECS world"
	// a second writer: true
}

// Three saves, each backup with a chunk store of its own; then the world
// file of the last one is damaged, and loading falls back to the newest
// intact generation by itself.
func ExampleDir_LoadIntact() {
	fsys := vfs.NewMem()
	store := chunkstore.Options{ChunkSize: 16, TileSize: 8, PixelSize: 4}
	w, err := savedir.OpenWriter("/saves/world1", savedir.Options{FS: fsys, Store: store})
	if err != nil {
		panic(err)
	}
	for g := 1; g <= 3; g++ {
		w.Submit(savedir.Job{Snap: &snapshot.Snapshot{World: fmt.Appendf(nil, "world of save %d", g)}, MaxBackups: 1})
		if r := w.WaitIdle(); r.Err != nil {
			panic(r.Err)
		}
	}
	w.Close()

	// The chunk store's file is lost (this world stores no chunk yet: the
	// file holds the store's header slots): its mirror in backups/ holds
	// them, and generation 3 loads through it.
	fsys.Remove("/saves/world1/chunks.pxsw")

	d, err := savedir.OpenDir(fsys, "/saves/world1")
	if err != nil {
		panic(err)
	}
	defer d.Close()
	world, fb, err := d.LoadIntact(nil)
	fmt.Printf("%q %v\n", world, err)
	fmt.Println("damaged", fb.Damaged, "loaded", fb.Loaded, "as", fb.Generation)
	fmt.Println("chunk store:", d.Manifest().Chunks.Name)
	// Output:
	// "world of save 3" <nil>
	// damaged 3 loaded 3 as 4
	// chunk store: chunks-4.pxsw
}
