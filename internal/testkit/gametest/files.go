package gametest

import (
	"bytes"
	"path"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// OpenCommittedStore opens the committed generation's chunk store in dir
// read-only, with the test game's generator, and returns it with the
// directory's manifest.
func OpenCommittedStore(t testing.TB, fsys vfs.FS, dir string) (*chunkstore.Store, *savedir.Manifest) {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	must(t, err)
	m := d.Manifest()
	expect(t, m != nil, "no manifest in %s", dir)
	p, err := d.File(m.Chunks.Name)
	must(t, err)
	s, err := chunkstore.Open(p, &chunkstore.Options{FS: fsys, ReadOnly: true, Root: m.Chunks.Root, Generator: Gen{}})
	must(t, err)
	return s, m
}

// StoreFiles lists the paths of the committed generation's chunk store
// file and data files in /save.
func StoreFiles(t testing.TB, fsys vfs.FS) []string {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	m := d.Manifest()
	var out []string
	for _, n := range append([]string{m.Chunks.Name}, m.Chunks.Data...) {
		p, err := d.File(n)
		must(t, err)
		out = append(out, p)
	}
	return out
}

// Files returns every file under dir (and backups/) with its bytes.
func Files(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{dir, dir + "/backups"} {
		names, _ := fsys.ReadDir(sub)
		for _, n := range names {
			p := sub + "/" + n
			if st, err := fsys.Stat(p); err == nil && !st.IsDir() {
				raw, err := vfs.ReadFile(fsys, p)
				must(t, err)
				out[p] = raw
			}
		}
	}
	return out
}

// FlipAt inverts the byte at off in the file at path.
func FlipAt(t testing.TB, fsys vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fsys.OpenRW(path)
	must(t, err)
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
}

// ThreeGenerations saves three generations in memory, each painting one
// more pixel of chunk (0,0) and setting Score to its number, in /save, with two
// backups kept, which share the chunk store; after each save the writer
// grows the mirrors of the files it shares (backups/mirror-*). It returns
// the file system and the digest of chunk (0,0) in each generation.
func ThreeGenerations(t *testing.T) (*vfs.Mem, map[uint64]uint64) {
	t.Helper()
	mem := vfs.NewMem()
	g := New(t, Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 2}})
	g.Settle(t)
	digests := map[uint64]uint64{}
	for gen := uint64(1); gen <= 3; gen++ {
		g.Paint(t, 0, 0, int(gen), 2, components.MakePixel(9, 0, 0, 0))
		ecs.GetResource[Score](g.W).Points = int(gen)
		res := g.WaitSave(t, g.Pers.Save())
		must(t, res.Err)
		expect(t, res.Generation == gen, "save %d committed generation %d", gen, res.Generation)
		g.Pers.WaitIdle()
		_, err := mem.Stat("/save/" + savedir.MirrorName(savedir.ChunksName))
		expect(t, res.BackupChunks == "" && err == nil, "save %d: backup store %q, mirror of the store file: %v", gen, res.BackupChunks, err)
		digests[gen] = g.ChunkDigest(t, 0, 0)
	}
	must(t, g.Pers.Close())
	return mem, digests
}

// ExpectSameFiles fails t unless after holds exactly the files of before,
// byte for byte. The lock file is left out: every program that opens the
// save for writing rewrites it to name itself (with the second it began),
// whether or not it then changes anything.
func ExpectSameFiles(t testing.TB, before, after map[string][]byte) {
	t.Helper()
	expect(t, len(before) == len(after), "files changed: %d before, %d after", len(before), len(after))
	for name, raw := range before {
		if path.Base(name) == savedir.LockName {
			_, ok := after[name]
			expect(t, ok, "%s removed", name)
			continue
		}
		expect(t, bytes.Equal(after[name], raw), "%s changed", name)
	}
}

// DropMirrors removes the mirrors the writer grew in /save/backups
// (savedir.MirrorName): the save is then as one written before mirrors
// existed, whose damage a load and a repair meet where it is.
func DropMirrors(t testing.TB, fsys vfs.FS) {
	t.Helper()
	names, err := fsys.ReadDir("/save/" + savedir.BackupDir)
	must(t, err)
	for _, n := range names {
		if _, ok := savedir.MirroredName(savedir.BackupDir + "/" + n); ok {
			must(t, fsys.Remove("/save/"+savedir.BackupDir+"/"+n))
		}
	}
}
