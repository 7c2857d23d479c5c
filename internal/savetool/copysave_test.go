package savetool_test

import (
	"testing"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/contract"
	"github.com/arksave/arksave/vfs"
)

// Copy takes every file the generations use, the chunk store's data files
// and the players files included: the copy opens at the same generation
// with the same world, chunks, bodies and player, and its backups restore.
func TestCopyDataAndPlayersFiles(t *testing.T) {
	src, dst := vfs.NewMem(), vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: src, Store: contract.StoreOptions()})
	must(t, err)
	for g := 1; g <= 3; g++ {
		expect(t, w.Submit(savedir.Job{Snap: contract.Snapshot(g), MaxBackups: 2}), "writer busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close())
	r, err := savetool.Copy("/save", "/copy", savetool.CopyOptions{Options: savetool.Options{FS: src}, DstFS: dst})
	must(t, err)
	expect(t, r.Generation == 3 && r.Backups == 2, "copied %+v", r)
	contract.ExpectGeneration(t, dst, "/copy", 3)
	d, err := savedir.OpenDir(dst, "/copy")
	must(t, err)
	_, err = d.Restore(2, 2)
	must(t, err)
	must(t, d.Close())
	w, err = savedir.OpenWriter("/copy", savedir.Options{FS: dst, Store: contract.StoreOptions()})
	must(t, err)
	defer w.Close()
	rec, err := w.ReadPlayer("ada")
	must(t, err)
	expect(t, string(rec) == string(contract.PlayerRecord(2)), "the restored copy's player is not generation 2's")
}
