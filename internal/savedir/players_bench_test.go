package savedir_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// BenchmarkPlayers_1000Saved_10Changed measures the players files' choice:
// a save of 1,000 saved players (4 KiB records) of which 10 changed.
// "append" is what a save does: it appends the 10 records and writes the
// next index; "rewrite" writes every record, as a players file rewritten
// whole at every generation would. Each save is a whole commit on the real
// file system (chunk store, world file, manifest, every fsync), so the
// difference is what the players cost.
func BenchmarkPlayers_1000Saved_10Changed(b *testing.B) {
	for _, mode := range []string{"append", "rewrite"} {
		b.Run(mode, func(b *testing.B) {
			w, err := savedir.OpenWriter(b.TempDir(), savedir.Options{FS: vfs.OS, Store: storeConfig()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			record := func(i, round int) snapshot.PlayerRecord {
				sec := bytes.Repeat([]byte(fmt.Sprintf("player %d round %d;", i, round)), 4096/24)
				return snapshot.PlayerRecord{ID: fmt.Sprintf("player-%04d", i), Section: sec, Hash: uint64(round)<<32 | uint64(i) | 1}
			}
			save := func(recs []snapshot.PlayerRecord) *autosave.Result {
				if !w.Submit(savedir.Job{Snap: &snapshot.Snapshot{World: []byte("world"), Players: recs}}) {
					b.Fatal("writer busy")
				}
				res := w.Wait()
				if res.Err != nil {
					b.Fatal(res.Err)
				}
				return res
			}
			var all []snapshot.PlayerRecord
			for i := range 1000 {
				all = append(all, record(i, 0))
			}
			save(all)
			round := 0
			var written int64
			for b.Loop() {
				round++
				var recs []snapshot.PlayerRecord
				if mode == "rewrite" {
					for i := range 1000 {
						recs = append(recs, record(i, round))
					}
				} else {
					for i := range 10 {
						recs = append(recs, record((round*10+i)%1000, round))
					}
				}
				written += save(recs).BytesWritten
			}
			b.ReportMetric(float64(written)/float64(round), "bytes/save")
		})
	}
}
