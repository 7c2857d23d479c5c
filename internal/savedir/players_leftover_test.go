package savedir_test

import (
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// Players data files left by saves that never committed (a game killed in
// its first saves, twice) do not stop the next save with players: a name
// no manifest holds is taken again. A file a manifest names is never
// reused: a later save that needs a new data file picks a free name.
func TestPlayersDataLeftByUncommittedSaves(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/save"))
	for _, name := range []string{savedir.PlayersDataName, savedir.PlayersDataNameAt(1)} {
		f, err := mem.Create("/save/" + name)
		must(t, err)
		_, err = f.WriteAt([]byte("left by a save that was killed"), 0)
		must(t, err)
		must(t, f.Close())
	}
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	defer w.Close()
	save := func(recs ...snapshot.PlayerRecord) *autosave.Result {
		t.Helper()
		if !w.Submit(savedir.Job{Snap: &snapshot.Snapshot{World: []byte("world"), Players: recs}}) {
			t.Fatal("writer busy")
		}
		return w.Wait()
	}
	res := save(snapshot.PlayerRecord{ID: "ada", Section: []byte("ada's bag"), Hash: 1})
	must(t, res.Err)

	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	expect(t, m.Players != nil, "generation %d names no players", m.Generation)
	p, err := d.ReadPlayers(m)
	must(t, err)
	got, err := d.ReadPlayer(p, "ada")
	must(t, err)
	expect(t, string(got) == "ada's bag", "ada's record %q", got)
	d.Close()
}
