package savedir_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// backupSaver saves snapAt(g) through a writer on fsys, with backups
// that get a store of their own every `every` saves.
type backupSaver struct {
	t     *testing.T
	fsys  vfs.FS
	w     *savedir.Writer
	every int
	max   int
}

func (b *backupSaver) open() {
	b.t.Helper()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: b.fsys, Store: storeConfig()})
	must(b.t, err)
	b.w = w
}

func (b *backupSaver) save(g int) *autosave.Result {
	b.t.Helper()
	expect(b.t, b.w.Submit(savedir.Job{Snap: snapAt(g), MaxBackups: b.max, BackupCopyEvery: b.every}), "busy")
	r := b.w.Wait()
	must(b.t, r.Err)
	return r
}

// storeProblems returns what checking the directory finds, but for the
// world files (snapAt's are not PECS files).
func storeProblems(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	var out []string
	for _, p := range checkDir(fsys, "/save").Problems {
		if !strings.HasSuffix(p.File, ".pecs") {
			out = append(out, p.String())
		}
	}
	return out
}

// backupStores returns the chunk store each backup names, by generation.
func backupStores(t *testing.T, fsys vfs.FS) map[uint64]string {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	out := map[uint64]string{}
	for _, b := range d.Backups() {
		out[b.Generation] = b.Chunks.Name
	}
	return out
}

// TestBackupStoreOfItsOwn: after a save the writer copies the chunk store,
// and the next save's backup of that generation names the copy; the copy
// made after a session's last save serves the next session's first; with
// BackupCopyEvery n only every nth save is copied, and the newest backup
// with a store of its own stays beyond MaxBackups; every such backup
// restores exactly, and the directory checks clean throughout.
func TestBackupStoreOfItsOwn(t *testing.T) {
	mem := vfs.NewMem()
	b := &backupSaver{t: t, fsys: mem, every: 1, max: 1}
	b.open()
	b.save(1)
	r := b.save(2)
	expect(t, r.BackupChunks == savedir.CopiedChunksName(1) && r.BackupCopyBytes > 0 && r.BackupCopyDuration > 0,
		"save 2: backup store %q, copy of %d bytes in %v", r.BackupChunks, r.BackupCopyBytes, r.BackupCopyDuration)
	must(t, b.w.Close())
	expect(t, len(storeProblems(t, mem)) == 0, "check: %v", storeProblems(t, mem))

	// The next session: the copy made after generation 2 is generation 2's.
	b.open()
	r = b.save(3)
	expect(t, r.BackupChunks == savedir.CopiedChunksName(2), "first save of a session: backup store %q", r.BackupChunks)
	stores := backupStores(t, mem)
	expect(t, len(stores) == 1 && stores[2] == savedir.CopiedChunksName(2), "backups %v", stores)

	// Every third save (the copy after 3 counts): 6 is copied, and after
	// save 8 the backups of 7 (shared) and 6 (its own) stay.
	b.every = 3
	for g := 4; g <= 8; g++ {
		b.save(g)
	}
	stores = backupStores(t, mem)
	expect(t, len(stores) == 2 && stores[7] == savedir.ChunksName && stores[6] == savedir.CopiedChunksName(6),
		"with a copy every third save: backups %v", stores)
	must(t, b.w.Close())
	expect(t, len(storeProblems(t, mem)) == 0, "check: %v", storeProblems(t, mem))

	// The backup with a store of its own restores exactly, as a new
	// generation with a store of its own copy.
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	m, err := d.Restore(6, 2)
	must(t, err)
	expect(t, m.Generation == 9 && !strings.HasPrefix(m.Chunks.Name, savedir.BackupDir+"/"), "restored %+v", m)
	must(t, d.Close())
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, string(world) == "world generation 6", "restored world %q", world)
	must(t, w.Close())
	expect(t, len(storeProblems(t, mem)) == 0, "check: %v", storeProblems(t, mem))
}

// TestBackupCopyFails: a copy that fails (an error or a panic while it
// writes) leaves no file behind, the save before it stays committed, and
// the next save reports it and retires its backup with the shared store.
func TestBackupCopyFails(t *testing.T) {
	for _, panics := range []bool{false, true} {
		mem := vfs.NewMem()
		// Only the copy made after generation 1 fails.
		fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, name string) error {
			if op == vfs.OpCreate && strings.Contains(name, "/backups/chunks-1") {
				if panics {
					panic("copy panics")
				}
				return errors.New("no room for the copy")
			}
			return nil
		}))

		b := &backupSaver{t: t, fsys: fsys, every: 1, max: 1}
		b.open()
		b.save(1)
		r := b.save(2)
		expect(t, r.BackupCopyErr != nil && r.BackupChunks == "", "panics %v: copy error %v, backup store %q", panics, r.BackupCopyErr, r.BackupChunks)
		expect(t, !panics || errors.Is(r.BackupCopyErr, autosave.ErrPanic), "a panic in the copy: %v", r.BackupCopyErr)
		names, _ := mem.ReadDir("/save/backups")
		for _, n := range names {
			expect(t, !strings.HasPrefix(n, "chunks-1"), "the failed copy left %s", n)
		}
		r = b.save(3)
		expect(t, r.BackupCopyErr == nil && r.BackupChunks == savedir.CopiedChunksName(2), "after the failure: %v, %q", r.BackupCopyErr, r.BackupChunks)
		must(t, b.w.Close())
		expectGeneration(t, mem, 3)
	}
}

// TestWaitIdle: WaitIdle returns the save's result like Wait, but only once
// the copy of the chunk store that follows the save has ended; with nothing
// submitted it returns nil at once.
func TestWaitIdle(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	blocked := make(chan struct{})
	fsys := vfs.Faulty(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if strings.Contains(name, savedir.BackupDir+"/chunks-") {
			once.Do(func() { close(blocked) })
			<-gate
		}
		return nil
	}))

	b := &backupSaver{t: t, fsys: fsys, every: 1, max: 1}
	b.open()
	release := sync.OnceFunc(func() { close(gate) })
	defer b.w.Close()
	defer release() // before Close, which waits for the copy, should the test fail
	expect(t, b.w.WaitIdle() == nil, "WaitIdle with nothing submitted")
	expect(t, b.w.Submit(savedir.Job{Snap: snapAt(1), MaxBackups: b.max, BackupCopyEvery: b.every}), "busy")
	r := b.w.Wait()
	expect(t, r != nil && r.Err == nil && r.Generation == 1, "save 1: result %+v", r)
	<-blocked // the copy has started and waits

	idle := make(chan *autosave.Result)
	go func() { idle <- b.w.WaitIdle() }()
	select {
	case <-idle:
		t.Fatal("WaitIdle returned while the backup copy was still running")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	expect(t, <-idle == nil, "WaitIdle after Wait took the result")
	_, err := fsys.Stat("/save/" + savedir.CopiedChunksName(1))
	must(t, err)

	expect(t, b.w.Submit(savedir.Job{Snap: snapAt(2), MaxBackups: b.max, BackupCopyEvery: b.every}), "busy")
	r = b.w.WaitIdle()
	expect(t, r != nil && r.Err == nil && r.Generation == 2, "save 2: WaitIdle's result %+v", r)
	_, err = fsys.Stat("/save/" + savedir.CopiedChunksName(2))
	must(t, err)
}
