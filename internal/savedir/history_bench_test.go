package savedir_test

import (
	"path"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/vfs"
)

// historyDisk is what a history costs on disk after a run of saves.
type historyDisk struct {
	disk    int64 // every file of the save directory, backups/ included
	live    int64 // the committed generation's live records, page table and world file
	changed int64 // what the saves after the first wrote besides their world files: records, page tables, manifests
	worlds  int64 // the backups' world files
	mirrors int64 // backups/mirror-*: the one redundant copy of each shared file
	kept    int   // older generations kept
	moved   int   // saves before which compaction ran
}

// overhead is the disk used beyond the live world, the records changed
// within the window, the backups' world files and the mirrors: dead bytes
// of the files the committed generation uses, and the live records
// compaction copied out of files the older generations still use.
func (h historyDisk) overhead() int64 { return h.disk - h.mirrors - h.live - h.changed - h.worlds }

// runHistory saves a world of side² chunks (random pixels, records of
// 1 KiB that do not compress), then saves more times with historyChanged
// of them changed, through the writer on vfs.Mem, with 64 KiB data files
// and compaction between saves at its default threshold, and a retention
// that keeps every save of the last hour: all of them.
func runHistory(tb testing.TB, side int32, saves int) historyDisk {
	tb.Helper()
	mem := vfs.NewMem()
	cfg := storeConfig()
	cfg.DataFileSize = 64 << 10
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: cfg})
	must(tb, err)
	defer w.Close()
	h := historyState{side: side}
	var out historyDisk
	for i := range saves {
		expect(tb, w.Submit(savedir.Job{Snap: h.next(), Retention: autosave.Retention{All: time.Hour}}), "writer busy")
		r := w.Wait()
		must(tb, r.Err)
		must(tb, r.CompactErr)
		if i > 0 {
			out.changed += r.BytesWritten - r.WorldBytes
		}
		if r.Compacted {
			out.moved++
		}
	}
	info, err := savetool.InspectDir("/save", savetool.Options{FS: mem})
	must(tb, err)
	st := info.Stores[0]
	lock, err := mem.Stat(path.Join("/save", savedir.LockName))
	must(tb, err)
	out.disk = info.Bytes - lock.Size()
	out.live = st.RecordBytes + st.TableBytes + info.Generations[0].WorldBytes
	out.worlds = info.History.WorldBytes
	out.kept = info.History.Generations
	names, err := mem.ReadDir("/save/backups")
	must(tb, err)
	for _, n := range names {
		if name, ok := strings.CutPrefix(n, "mirror-"); ok {
			fi, err := mem.Stat(path.Join("/save/backups", n))
			must(tb, err)
			out.mirrors += fi.Size()
			// One redundant copy of a file that is there, never more than it.
			of, err := mem.Stat(path.Join("/save", name))
			must(tb, err)
			expect(tb, fi.Size() <= of.Size(), "%s: %d bytes, its file %d", n, fi.Size(), of.Size())
		}
	}
	return out
}

// TestHistoryDiskBounded (issue 25, row 5): a history of every save costs
// the live world, the records changed within it and a bounded overhead:
// at most the records changed again (compaction copies a live record out
// of a file older generations keep at most about once per change that
// freed it) plus the data files' slack.
func TestHistoryDiskBounded(t *testing.T) {
	h := runHistory(t, 20, 60)
	expect(t, h.kept == 59 && h.moved > 0, "%d older generations kept, compaction before %d saves", h.kept, h.moved)
	t.Logf("disk %d: live %d + changed %d + world files %d + mirrors %d + overhead %d", h.disk, h.live, h.changed, h.worlds, h.mirrors, h.overhead())
	expect(t, h.overhead() <= h.changed+h.live/4, "disk %d: live %d + changed %d + world files %d + mirrors %d + overhead %d",
		h.disk, h.live, h.changed, h.worlds, h.mirrors, h.overhead())
	expect(t, h.mirrors > 0, "no mirrors")
}

// BenchmarkHistoryDisk reports what a history of 200 saves of 5 changed
// chunks costs in a world of 1,600 stored chunks, every save kept
// (Retention.All), compaction between saves: disk/live (the directory
// against the committed generation's live bytes), changed/live (the
// records the window's saves wrote) and overhead/changed (what the disk
// holds beyond the live world, the changed records and the backups'
// world files, per changed byte). Run with -benchtime=1x.
func BenchmarkHistoryDisk(b *testing.B) {
	var h historyDisk
	for b.Loop() {
		h = runHistory(b, 40, 200)
	}
	b.ReportMetric(float64(h.disk)/float64(h.live), "disk/live")
	b.ReportMetric(float64(h.changed)/float64(h.live), "changed/live")
	b.ReportMetric(float64(h.overhead())/float64(h.changed), "overhead/changed")
	b.ReportMetric(float64(h.mirrors)/float64(h.disk-h.mirrors), "mirrors/rest")
	b.ReportMetric(float64(h.disk), "disk-bytes")
	b.ReportMetric(float64(h.kept), "kept-generations")
}
