package savedir_test

import (
	"bytes"
	"errors"

	"github.com/mlange-42/ark/ecs"

	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/vfs"
)

// savedDir holds two generations whose world files are real PECS files
// (of an empty world), so that the check has valid ones to verify.
func savedDir(t *testing.T) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	for g := 1; g <= 2; g++ {
		s := snapAt(g)
		s.World = emptyPECS(t)
		expect(t, w.Submit(savedir.Job{Snap: s, MaxBackups: 1}), "busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close())
	return mem
}

func TestCheckOfASaveDirClean(t *testing.T) {
	mem := savedDir(t)
	r := checkDir(mem, "/save")
	expect(t, r.OK(), "clean save reports %v", r.Problems)
	expect(t, r.Manifest.Generation == 2 && r.Backups == 1 && r.Stores == 2, "checked %+v", r)
}

func TestCheckOfASaveDirFindsEveryDamage(t *testing.T) {
	mem := savedDir(t)
	flip := func(name string, off int64) {
		f, err := mem.OpenRW("/save/" + name)
		must(t, err)
		b := []byte{0}
		_, err = f.ReadAt(b, off)
		must(t, err)
		b[0] ^= 0x10
		_, err = f.WriteAt(b, off)
		must(t, err)
		must(t, f.Close())
	}
	flip("world-2.pecs", 70)
	flip("backups/world-1.pecs", 10)
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	data := d.Manifest().Chunks.Data
	newest := data[len(data)-1]
	fi, err := mem.Stat("/save/" + newest)
	must(t, err)
	flip(newest, fi.Size()-60) // inside the newest records
	flip("chunks.pxsw", 70)    // header slot B
	r := checkDir(mem, "/save")
	var files []string
	for _, p := range r.Problems {
		files = append(files, p.File)
	}
	all := strings.Join(files, ",")
	for _, want := range []string{"world-2.pecs", "backups/world-1.pecs", "chunks.pxsw", newest} {
		expect(t, strings.Contains(all, want), "damage in %s not reported; problems: %v", want, r.Problems)
	}

	// Without the manifest, its loss is reported and the files it named are
	// still checked on their own.
	must(t, mem.Remove("/save/manifest"))
	r = checkDir(mem, "/save")
	files = files[:0]
	for _, p := range r.Problems {
		files = append(files, p.File)
		if p.File == "manifest" {
			expect(t, errors.Is(p.Err, autosave.ErrCorrupt) && strings.Contains(p.Err.Error(), "arksave repair"), "%v", p)
		}
	}
	all = strings.Join(files, ",")
	for _, want := range []string{"manifest", "world-2.pecs", "backups/world-1.pecs", "chunks.pxsw"} {
		expect(t, strings.Contains(all, want), "without a manifest, damage in %s not reported; problems: %v", want, r.Problems)
	}

	// An empty directory is no save, not a damaged one.
	must(t, mem.MkdirAll("/empty"))
	_, err = savetool.Check("/empty", savetool.Options{FS: mem})
	expect(t, errors.Is(err, autosave.ErrNoSave) && errors.Is(err, savetool.ErrNotASave), "empty directory: %v", err)
}

// checkDir checks a save directory as arksave check does (savetool.Check:
// checking belongs with the tool, not with the package that writes saves).
// A directory that cannot be checked at all is one problem of ".".
func checkDir(fsys vfs.FS, dir string) *savetool.CheckReport {
	r, err := savetool.Check(dir, savetool.Options{FS: fsys})
	if err != nil {
		return &savetool.CheckReport{Problems: []chunkstore.Problem{{File: ".", Offset: -1, Err: err}}}
	}
	return r
}

func emptyPECS(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	must(t, archetype.Encode(&buf, ecs.NewWorld()))
	return buf.Bytes()
}
