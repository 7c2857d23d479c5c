package savedir_test

import (
	"bytes"
	"errors"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
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

// mirrorsOf checks the mirrors of the committed generation in dir against
// the files they copy: each data file the manifest names has one holding
// the same bytes as the file, up to the generation's page-table record in
// the data file that holds it and whole in the others; the store file's
// holds its header slots. It returns each mirror's bytes by name.
func mirrorsOf(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	must(t, err)
	m := d.Manifest()
	ri, err := storetool.Tool.ParseRoot(m.Chunks.Root)
	must(t, err)
	table := storetool.Handle{Offset: ri.Table}
	read := func(rel string) []byte {
		t.Helper()
		b, err := vfs.ReadFile(fsys, dir+"/"+rel)
		must(t, err)
		return b
	}
	out := map[string][]byte{}
	for _, name := range append([]string{m.Chunks.Name}, m.Chunks.Data...) {
		live, mirror := read(name), read(savedir.MirrorName(name))
		out[name] = mirror
		_, n, _ := savedir.DataFileOf(name)
		if name != m.Chunks.Name && n == table.File() {
			expect(t, len(mirror) > int(table.FileOffset()) && bytes.HasPrefix(live, mirror),
				"generation %d: the mirror of %s (%d bytes) does not hold the page table at %d of its %d bytes",
				m.Generation, name, len(mirror), table.FileOffset(), len(live))
			continue
		}
		expect(t, bytes.Equal(live, mirror), "generation %d: the mirror of %s holds %d bytes, the file %d, or they differ",
			m.Generation, name, len(mirror), len(live))
	}
	return out
}

// TestMirrorsFollowCommits: after each save the writer grows one mirror per
// file the generation shares (each data file, the store file's slots) by
// what the save added, never copying the store whole: a sealed data file
// is copied once and never written again, a save's mirror bytes stay
// bounded while the store grows, mirrors go with their files, and the
// directory checks clean throughout.
func TestMirrorsFollowCommits(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	writes := map[string]int{} // writes to each mirror
	fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if (op == vfs.OpWrite || op == vfs.OpCreate || op == vfs.OpTruncate) && strings.Contains(name, "/backups/mirror-") {
			mu.Lock()
			writes[path.Base(name)]++
			mu.Unlock()
		}
		return nil
	}))
	b := &backupSaver{t: t, fsys: fsys, every: 1, max: 1}
	b.open()
	sealed := map[string]int{} // data files sealed: the writes their mirror had then
	for g := 1; g <= 40; g++ {
		r := b.save(g)
		b.w.WaitIdle()
		expect(t, r.BackupCopyErr == nil, "save %d: %v", g, r.BackupCopyErr)
		expect(t, r.BackupChunks == "", "save %d: a whole copy of the store for the backup: %s", g, r.BackupChunks)
		mirrorsOf(t, mem, "/save")
		mu.Lock()
		for name, n := range sealed {
			expect(t, writes[path.Base(savedir.MirrorName(name))] == n, "save %d: the mirror of sealed %s was written again", g, name)
		}
		d, err := savedir.OpenDirReadOnly(mem, "/save")
		must(t, err)
		data := d.Manifest().Chunks.Data
		for _, name := range data[:len(data)-1] {
			if _, ok := sealed[name]; !ok {
				sealed[name] = writes[path.Base(savedir.MirrorName(name))]
			}
		}
		mu.Unlock()
	}
	expect(t, len(sealed) >= 3, "only %d data files were sealed: the test needs more saves", len(sealed))
	// What the mirrors got after a save (in the next save's result) is
	// what it appended to the store: bounded by a data file, never the
	// store's size.
	for g := 41; g <= 44; g++ {
		r := b.save(g)
		expect(t, r.BackupCopyBytes > 0 && r.BackupCopyBytes < 2*storeConfig().DataFileSize+512,
			"save %d: the mirrors got %d bytes after the save before it (the store holds %d)", g, r.BackupCopyBytes, storeBytes(t, mem, "/save", savedir.ChunksName))
	}
	must(t, b.w.Close())
	expect(t, storeBytes(t, mem, "/save", savedir.ChunksName) > 4*storeConfig().DataFileSize, "the store holds too little for the test")
	expect(t, len(storeProblems(t, mem)) == 0, "check: %v", storeProblems(t, mem))

	// Every mirror has its file: those of files compaction emptied went
	// with them.
	names, err := mem.ReadDir("/save/backups")
	must(t, err)
	for _, n := range names {
		if live, ok := savedir.MirroredName(savedir.BackupDir + "/" + n); ok {
			_, err := mem.Stat("/save/" + live)
			expect(t, err == nil, "the mirror %s outlived its file: %v", n, err)
		}
	}
}

// TestMirrorFails: a mirror that cannot be grown (an error or a panic
// while it writes) leaves the save committed and is reported in the
// next result; the next save's mirroring catches up with both saves.
func TestMirrorFails(t *testing.T) {
	for _, panics := range []bool{false, true} {
		mem := vfs.NewMem()
		var fail atomic.Bool
		fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, name string) error {
			if op == vfs.OpWrite && strings.Contains(name, "/backups/mirror-chunks-data-") && fail.Load() {
				if panics {
					panic("mirror panics")
				}
				return errors.New("no room for the mirror")
			}
			return nil
		}))
		b := &backupSaver{t: t, fsys: fsys, every: 1, max: 1}
		b.open()
		b.save(1)
		fail.Store(true)
		b.save(2)
		b.w.WaitIdle()
		fail.Store(false)
		r := b.save(3)
		expect(t, r.BackupCopyErr != nil, "panics %v: the failed mirror is not reported", panics)
		expect(t, !panics || errors.Is(r.BackupCopyErr, autosave.ErrPanic), "a panic in the mirror: %v", r.BackupCopyErr)
		b.w.WaitIdle()
		mirrorsOf(t, mem, "/save")
		r = b.save(4)
		expect(t, r.BackupCopyErr == nil, "after the failure: %v", r.BackupCopyErr)
		must(t, b.w.Close())
		expectGeneration(t, mem, 4)
		mirrorsOf(t, mem, "/save")
	}
}

// TestWaitIdle: WaitIdle returns the save's result like Wait, but only once
// the mirrors that follow the save are grown; with nothing
// submitted it returns nil at once.
func TestWaitIdle(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	blocked := make(chan struct{})
	fsys := vfs.Faulty(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if strings.Contains(name, savedir.BackupDir+"/mirror-chunks-data-") {
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
		t.Fatal("WaitIdle returned while the mirrors were still being grown")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	expect(t, <-idle == nil, "WaitIdle after Wait took the result")
	mirrorsOf(t, fsys, "/save")

	expect(t, b.w.Submit(savedir.Job{Snap: snapAt(2), MaxBackups: b.max, BackupCopyEvery: b.every}), "busy")
	r = b.w.WaitIdle()
	expect(t, r != nil && r.Err == nil && r.Generation == 2, "save 2: WaitIdle's result %+v", r)
	mirrorsOf(t, fsys, "/save")
}

// TestMirrorResumesAfterATornGrowth: a mirror that ends inside a record (a
// crash while the writer grew it) goes on from its last whole record at
// the next save, and holds its file's bytes again.
func TestMirrorResumesAfterATornGrowth(t *testing.T) {
	mem := vfs.NewMem()
	b := &backupSaver{t: t, fsys: mem, every: 1, max: 1}
	b.open()
	b.save(1)
	b.w.WaitIdle()
	mirror := "/save/" + savedir.MirrorName("chunks-data-1.pxsd")
	st, err := mem.Stat(mirror)
	must(t, err)
	f, err := mem.OpenRW(mirror)
	must(t, err)
	must(t, f.Truncate(st.Size()-5))
	must(t, f.Close())
	must(t, b.save(2).Err)
	b.w.WaitIdle()
	r := b.save(3)
	expect(t, r.BackupCopyErr == nil, "growing the torn mirror: %v", r.BackupCopyErr)
	b.w.WaitIdle()
	mirrorsOf(t, mem, "/save")
	must(t, b.w.Close())
}
