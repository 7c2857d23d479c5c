package savedir_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// hashTree lists every file under dir, the lock file among them, with
// the hash of its content; directories as "dir".
func hashTree(t *testing.T, fsys vfs.FS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(rel string)
	walk = func(rel string) {
		names, err := fsys.ReadDir(filepath.Join(dir, rel))
		must(t, err)
		for _, n := range names {
			p := filepath.Join(rel, n)
			fi, err := fsys.Lstat(filepath.Join(dir, p))
			must(t, err)
			if fi.IsDir() {
				out[p] = "dir"
				walk(p)
				continue
			}
			data, err := vfs.ReadFile(fsys, filepath.Join(dir, p))
			must(t, err)
			sum := sha256.Sum256(data)
			out[p] = string(sum[:])
		}
	}
	walk(".")
	return out
}

func expectSameHashes(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for n, h := range before {
		a, ok := after[n]
		expect(t, ok, "%s: %s was removed", what, n)
		expect(t, !ok || a == h, "%s: %s changed", what, n)
	}
	for n := range after {
		_, ok := before[n]
		expect(t, ok, "%s: %s appeared", what, n)
	}
}

// A save directory moved away or replaced while its writer runs (mv S
// S.old; mkdir S, or another game making S anew): the writer's lock is on
// the directory moved away, so it commits nothing more. Its next saves fail
// with ErrLocked (Lost), saying so, and touch nothing at the path, nor in
// the directory moved away, which keeps its last generation.
func TestSaveDirectoryMovedWhileHeld(t *testing.T) {
	type fsCase struct {
		name   string
		second bool // another writer makes a save at the path
		fsys   vfs.FS
		dir    string
		// away moves the directory away (OS) or removes it (Mem, which
		// cannot rename directories); it returns where it went, or "".
		away func(t *testing.T, dir string) string
	}
	cases := []fsCase{}
	for _, second := range []bool{false, true} {
		how := map[bool]string{false: "empty", true: "second writer"}[second]
		cases = append(cases,
			fsCase{"os/" + how, second, vfs.OS, filepath.Join(t.TempDir(), "save"), func(t *testing.T, dir string) string {
				must(t, os.Rename(dir, dir+".old"))
				return dir + ".old"
			}},
			fsCase{"mem/" + how, second, vfs.NewMem(), "/save", nil})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := savedir.OpenWriter(tc.dir, savedir.Options{FS: tc.fsys, Store: storeConfig()})
			must(t, err)
			defer w.Close()
			must(t, save(t, w, 1).Err)
			w.WaitIdle()
			wantWorld, err := w.ReadWorld()
			must(t, err)

			moved := ""
			if tc.away != nil {
				moved = tc.away(t, tc.dir)
			} else {
				must(t, tc.fsys.RemoveAll(tc.dir))
			}
			var oldTree map[string]string
			if moved != "" {
				oldTree = hashTree(t, tc.fsys, moved)
			}
			must(t, tc.fsys.MkdirAll(tc.dir))
			if tc.second {
				other, err := savedir.OpenWriter(tc.dir, savedir.Options{FS: tc.fsys, Store: storeConfig(), Fresh: true})
				must(t, err)
				defer other.Close()
				must(t, save(t, other, 1).Err)
				other.WaitIdle()
			}
			newTree := hashTree(t, tc.fsys, tc.dir)

			for g := 2; g <= 3; g++ {
				r := save(t, w, g)
				var le *autosave.LockedError
				expect(t, errors.Is(r.Err, autosave.ErrLocked) && errors.As(r.Err, &le) && le.Lost,
					"save %d after the directory was moved committed or failed otherwise: %v", g, r.Err)
				msg := ""
				if r.Err != nil {
					msg = r.Err.Error()
				}
				expect(t, strings.Contains(msg, "moved, removed or replaced") && strings.Contains(msg, "open the save again") && strings.Contains(msg, tc.dir),
					"message: %s", msg)
				w.WaitIdle()
			}
			must(t, w.Close())
			expectSameHashes(t, "the directory now at the path", newTree, hashTree(t, tc.fsys, tc.dir))
			if moved == "" {
				return
			}
			expectSameHashes(t, "the directory moved away", oldTree, hashTree(t, tc.fsys, moved))
			d, err := savedir.OpenDir(tc.fsys, moved)
			must(t, err)
			defer d.Close()
			expect(t, d.Generation() == 1, "the directory moved away is at generation %d", d.Generation())
			got, err := d.ReadWorld(nil)
			must(t, err)
			expect(t, bytes.Equal(got, wantWorld), "the directory moved away lost its world")
		})
	}
}
