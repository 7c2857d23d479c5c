package savedir_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// failAt fails one kind of call of a save, again and again, until cleared:
// every save in a row fails at the same step.
type failAt struct {
	mu        sync.Mutex
	step      string // "" fails nothing
	syncs     int    // OpSync calls on the chunk store's files in this save
	mainSyncs int    // those on its store file
}

func (f *failAt) set(step string) {
	f.mu.Lock()
	f.step, f.syncs, f.mainSyncs = step, 0, 0
	f.mu.Unlock()
}

func (f *failAt) Inject(op vfs.Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	store := (strings.HasSuffix(name, ".pxsw") || strings.HasSuffix(name, ".pxsd")) && !strings.Contains(name, "/backups/") // not the mirrors
	if store && op == vfs.OpSync {
		f.syncs++
		if strings.HasSuffix(name, ".pxsw") {
			f.mainSyncs++
		}
	}
	fail := false
	switch f.step {
	case "world file": // the directory does not take new files
		fail = op == vfs.OpCreate && strings.Contains(name, "world-")
	case "records sync":
		fail = store && op == vfs.OpSync && f.syncs == 1
	case "header slot sync": // the first sync of the store file
		fail = op == vfs.OpSync && strings.HasSuffix(name, ".pxsw") && f.mainSyncs == 1
	case "record write":
		fail = store && op == vfs.OpWrite
	case "manifest":
		fail = op == vfs.OpRename && strings.HasSuffix(name, "manifest.tmp")
	case "reopen":
		// the manifest, and then reopening the store after the failure
		fail = op == vfs.OpRename && strings.HasSuffix(name, "manifest.tmp") || store && op == vfs.OpOpenRW
	}
	if fail {
		return syscall.EIO
	}
	return nil
}

// Saves that fail, many in a row, leave the chunk store's files at their
// size: a save that fails takes the store back to where it was (the data
// file it appended to cut back, the data files it started removed),
// whichever step failed. Each result names the directory; once the fault is gone, the next
// save commits.
func TestFailedSavesKeepStoreSize(t *testing.T) {
	for _, step := range []string{"world file", "records sync", "header slot sync", "record write", "manifest", "reopen"} {
		t.Run(strings.ReplaceAll(step, " ", "-"), func(t *testing.T) {
			mem := vfs.NewMem()
			faults := &failAt{}
			w, err := savedir.OpenWriter("/save", savedir.Options{FS: vfs.Faulty(mem, faults), Store: storeConfig()})
			must(t, err)
			defer w.Close()
			must(t, save(t, w, 1).Err)
			size := storeBytes(t, mem, "/save", "chunks.pxsw")

			faults.set(step)
			for i := range 20 {
				r := save(t, w, 2+i)
				expect(t, r.Err != nil && (errors.Is(r.Err, syscall.EIO) || step == "reopen"), "save %d with a failing %s: %v", i, step, r.Err)
				expect(t, r.Dir == "/save", "save %d: the result names directory %q", i, r.Dir)
				expect(t, r.Generation == 1, "save %d: generation %d", i, r.Generation)
				got := storeBytes(t, mem, "/save", "chunks.pxsw")
				expect(t, got == size, "failing %s, save %d: the chunk store grew from %d to %d bytes", step, i, size, got)
				faults.set(step) // the next save fails at the same step
			}
			faults.set("")
			r := save(t, w, 22)
			must(t, r.Err)
			expect(t, r.Generation == 2, "the retry committed generation %d", r.Generation)
			must(t, w.Close())
			w, err = savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
			must(t, err)
			world, err := w.ReadWorld()
			must(t, err)
			expect(t, w.Generation() == 2 && string(world) == "world generation 22", "reopened at generation %d with %q", w.Generation(), world)
			must(t, w.Close())
		})
	}
}

func fileSize(t *testing.T, fsys vfs.FS, name string) int64 {
	t.Helper()
	fi, err := fsys.Stat(name)
	must(t, err)
	return fi.Size()
}

// A store's failed commit, and a commit taken back with Revert, leave the
// file at its size and opening at the generation before.
func TestStoreRevert(t *testing.T) {
	mem := vfs.NewMem()
	cfg := storeConfig()
	cfg.FS = mem
	s, err := chunkstore.Create("/s.pxsw", &cfg)
	must(t, err)
	put := func(s *chunkstore.Store, v uint32) error {
		b := s.NewBatch()
		pix := make([]uint32, size*size)
		pix[0] = v
		b.PutChunk(chunkstore.Pos{}, pix)
		_, err := s.Commit(b)
		return err
	}
	must(t, put(s, 1))
	before := storeBytes(t, mem, "/", "s.pxsw")
	mark, err := storetool.Tool.Mark(s)
	must(t, err)
	must(t, put(s, 2))
	must(t, put(s, 3))
	expect(t, storeBytes(t, mem, "/", "s.pxsw") > before, "the commits wrote nothing")
	must(t, storetool.Tool.Revert(s, mark))
	expect(t, storeBytes(t, mem, "/", "s.pxsw") == before, "revert left %d bytes, want %d", storeBytes(t, mem, "/", "s.pxsw"), before)
	expect(t, put(s, 4) != nil, "a reverted store still commits")
	s, err = chunkstore.Open("/s.pxsw", &cfg)
	must(t, err)
	defer s.Close()
	pix := make([]uint32, size*size)
	_, err = s.Get(chunkstore.Pos{}, pix)
	must(t, err)
	expect(t, s.Generation() == 1 && pix[0] == 1, "after revert: generation %d, pixel %d", s.Generation(), pix[0])
}

// Readers without the lock (savetool.Check, ReadConsistent) see a consistent
// generation while a writer commits, retires world files into backups/,
// prunes backups and compacts the store into new files: no false damage.
func TestReadersWhileCommitting(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: compactConfig()})
	must(t, err)
	defer w.Close()
	pecs := emptyPECS(t)
	snap := func(g int) *savedir.Job {
		s := randomSnap(g)
		s.World = pecs
		return &savedir.Job{Snap: s, MaxBackups: 1}
	}
	expect(t, w.Submit(*snap(1)), "busy")
	must(t, w.Wait().Err)

	var stop atomic.Bool
	var wg sync.WaitGroup
	problems := make(chan string, 64)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if r := checkDir(mem, "/save"); !r.OK() {
				problems <- "check: " + r.Problems[0].String()
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			err := savedir.ReadConsistent(mem, "/save", func(d *savedir.Dir) error {
				if _, err := d.ReadWorld(nil); err != nil {
					return err
				}
				p, err := d.File(d.Manifest().Chunks.Name)
				if err != nil {
					return err
				}
				s, err := chunkstore.Open(p, &chunkstore.Options{FS: mem, ReadOnly: true, Root: d.Manifest().Chunks.Root})
				if err != nil {
					return err
				}
				return s.Close()
			})
			if err != nil {
				problems <- "read: " + err.Error()
				return
			}
		}
	}()
	compacted := false
	for g := 2; g <= 40; g++ {
		expect(t, w.Submit(*snap(g)), "busy")
		r := w.Wait()
		must(t, r.Err)
		compacted = compacted || r.Compacted
	}
	stop.Store(true)
	wg.Wait()
	close(problems)
	for p := range problems {
		t.Error(p)
	}
	expect(t, compacted, "no save compacted the store")
}
