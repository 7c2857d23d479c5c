package savedir_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// hostile is a save directory someone crafted: a manifest whose names lead
// outside, symbolic links to files and directories outside, generations
// that overflow, duplicate and missing entries.
type hostile struct {
	name string
	// edit changes the save in dir; out is a directory outside it whose
	// files must stay exactly as they are.
	edit func(t *testing.T, dir, out string)
	// open is what OpenDir's error must say (ErrCorrupt), "" when the
	// directory may open.
	open string
}

// editManifest rewrites the manifest at rel (in dir) after fn changed it,
// with a valid checksum: only the names are hostile.
func editManifest(rel string, fn func(m *savedir.Manifest, dir, out string)) func(*testing.T, string, string) {
	return func(t *testing.T, dir, out string) {
		d, err := savedir.OpenDirReadOnly(nil, dir)
		must(t, err)
		m := d.Manifest()
		if rel != savedir.ManifestName {
			m, err = d.Backup(2)
			must(t, err)
		}
		fn(m, dir, out)
		must(t, os.WriteFile(filepath.Join(dir, rel), m.Encode(), 0o644))
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	must(t, os.RemoveAll(link))
	must(t, os.Symlink(target, link))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, data, 0o644))
}

var hostiles = []hostile{
	{"world-name-traversal", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.World.Name = "../outside/canary" }), "world.name"},
	{"world-name-absolute", editManifest("manifest", func(m *savedir.Manifest, _, out string) { m.World.Name = filepath.Join(out, "canary") }), "world.name"},
	{"world-name-traversal-inside", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.World.Name = "world-3.pecs/../../outside/canary" }), "world.name"},
	{"world-name-of-the-store", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.World.Name = "chunks.pxsw" }), "world.name"},
	{"world-name-empty", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.World.Name = "" }), "world.name"},
	{"chunks-name-traversal", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.Chunks.Name = "../outside/canary.pxsw" }), "chunks.name"},
	{"chunks-name-absolute", editManifest("manifest", func(m *savedir.Manifest, _, out string) { m.Chunks.Name = filepath.Join(out, "canary.pxsw") }), "chunks.name"},
	{"chunks-name-backups", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.Chunks.Name = "backups/chunks.pxsw" }), "chunks.name"},
	{"backup-world-traversal", editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) { m.World.Name = "backups/../../outside/canary" }), ""},
	{"backup-world-is-the-current-one", editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) { m.World.Name = "world-3.pecs" }), ""},
	{"backup-chunks-traversal", editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) { m.Chunks.Name = "../outside/canary.pxsw" }), ""},
	{"generation-max", editManifest("manifest", func(m *savedir.Manifest, dir, _ string) {
		m.Generation = math.MaxUint64
		m.World.Name = fmt.Sprintf("world-%d.pecs", uint64(math.MaxUint64))
		os.Rename(filepath.Join(dir, "world-3.pecs"), filepath.Join(dir, m.World.Name))
	}), "generation"},
	{"generation-zero", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.Generation, m.World.Name = 0, "world-0.pecs" }), "generation"},
	{"backup-generation-max", func(t *testing.T, dir, _ string) {
		d, err := savedir.OpenDirReadOnly(nil, dir)
		must(t, err)
		b, err := d.Backup(1)
		must(t, err)
		b.Generation = math.MaxUint64
		b.World.Name = fmt.Sprintf("backups/world-%d.pecs", uint64(math.MaxUint64))
		must(t, os.WriteFile(filepath.Join(dir, "backups", fmt.Sprintf("manifest-%d", uint64(math.MaxUint64))), b.Encode(), 0o644))
		copyFile(t, filepath.Join(dir, "backups", "world-1.pecs"), filepath.Join(dir, b.World.Name))
	}, ""},
	{"duplicate-world-entry", func(t *testing.T, dir, _ string) {
		data, err := os.ReadFile(filepath.Join(dir, "manifest"))
		must(t, err)
		data = bytes.Replace(data, []byte(`"world": {`), []byte(`"world": {"name": "../outside/canary"}, "world": {`), 1)
		must(t, os.WriteFile(filepath.Join(dir, "manifest"), data, 0o644))
	}, "manifest"},
	{"missing-world-entry", func(t *testing.T, dir, _ string) {
		data, err := os.ReadFile(filepath.Join(dir, "manifest"))
		must(t, err)
		i := bytes.Index(data, []byte(`"world": {`))
		j := bytes.Index(data[i:], []byte("},")) + i + 2
		must(t, os.WriteFile(filepath.Join(dir, "manifest"), append(data[:i:i], data[j:]...), 0o644))
	}, "manifest"},
	{"huge-manifest", func(t *testing.T, dir, _ string) {
		must(t, os.WriteFile(filepath.Join(dir, "manifest"), bytes.Repeat([]byte(" "), 1<<20), 0o644))
	}, "manifest"},
	{"symlinked-world-file", func(t *testing.T, dir, out string) {
		copyFile(t, filepath.Join(dir, "world-3.pecs"), filepath.Join(out, "world-copy.pecs"))
		symlink(t, filepath.Join(out, "world-copy.pecs"), filepath.Join(dir, "world-3.pecs"))
	}, ""},
	{"symlinked-store", func(t *testing.T, dir, out string) {
		symlink(t, filepath.Join(out, "canary.pxsw"), filepath.Join(dir, "chunks.pxsw"))
	}, ""},
	{"symlinked-manifest", func(t *testing.T, dir, out string) {
		copyFile(t, filepath.Join(dir, "manifest"), filepath.Join(out, "manifest"))
		symlink(t, filepath.Join(out, "manifest"), filepath.Join(dir, "manifest"))
	}, "symbolic link"},
	{"symlinked-backups", func(t *testing.T, dir, out string) {
		// The backups live outside now, next to an unlisted file that a
		// cleanup of backups/ would remove.
		must(t, os.Rename(filepath.Join(dir, "backups"), filepath.Join(out, "backups")))
		must(t, os.WriteFile(filepath.Join(out, "backups", "world-9.pecs"), []byte("not ours"), 0o644))
		symlink(t, filepath.Join(out, "backups"), filepath.Join(dir, "backups"))
	}, "backups/"},
	{"chunks-name-a-backups-own-store", editManifest("manifest", func(m *savedir.Manifest, _, _ string) { m.Chunks.Name = savedir.CopiedChunksName(3) }), "chunks.name"},
	{"backup-names-another-backups-own-store", editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) {
		m.Chunks.Name, m.Chunks.Data = savedir.CopiedChunksName(1), nil
	}), ""},
	{"backup-own-store-data-traversal", editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) {
		m.Chunks.Name, m.Chunks.Data = savedir.CopiedChunksName(2), []string{"backups/../../outside/chunks-2-data-1.pxsd"}
	}), ""},
	// The current generation is damaged, so that loading falls back; the
	// newest backup's own store is a symbolic link to a store outside.
	{"fallback-over-a-symlinked-backup-store", func(t *testing.T, dir, out string) {
		editManifest("backups/manifest-2", func(m *savedir.Manifest, _, _ string) {
			m.Chunks.Name, m.Chunks.Data = savedir.CopiedChunksName(2), nil
		})(t, dir, out)
		copyFile(t, filepath.Join(dir, "chunks.pxsw"), filepath.Join(out, "store-copy.pxsw"))
		symlink(t, filepath.Join(out, "store-copy.pxsw"), filepath.Join(dir, "backups", "chunks-2.pxsw"))
		must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 40))
	}, ""},
	{"symlinked-lock", func(t *testing.T, dir, out string) {
		symlink(t, filepath.Join(out, "canary"), filepath.Join(dir, savedir.LockName))
	}, "lock"},
}

// Every hostile save directory: every operation on it (the game loading it
// or starting over, the writer, check, inspect, render, export, repair,
// compact, restore, migrate) returns normally or with an error, never
// panics, and leaves every file outside the directory exactly as it was
// (content, modification time, no file added or removed). Names of the
// wrong form are ErrCorrupt naming the field.
func TestHostileSaveDirectories(t *testing.T) {
	base, cleanup, err := savetest.BuildTemp()
	must(t, err)
	defer cleanup()
	for _, h := range hostiles {
		t.Run(h.name, func(t *testing.T) {
			root := t.TempDir()
			dir, out := filepath.Join(root, "save"), filepath.Join(root, "outside")
			must(t, savetest.CopyDir(base, dir))
			must(t, os.MkdirAll(out, 0o755))
			must(t, os.WriteFile(filepath.Join(out, "canary"), []byte("canary"), 0o644))
			copyFile(t, filepath.Join(dir, "chunks.pxsw"), filepath.Join(out, "canary.pxsw"))
			h.edit(t, dir, out)
			// Older modification times make any write to a canary show.
			past := time.Now().Add(-time.Hour).Truncate(time.Second)
			must(t, filepath.WalkDir(out, func(p string, _ fs.DirEntry, err error) error {
				if err == nil {
					err = os.Chtimes(p, past, past)
				}
				return err
			}))
			before := treeOf(t, out)

			if h.open != "" {
				if _, err := savedir.OpenDir(nil, dir); !errors.Is(err, autosave.ErrCorrupt) || !strings.Contains(err.Error(), h.open) {
					t.Errorf("OpenDir: want ErrCorrupt naming %q, got %v", h.open, err)
				}
			}
			for _, op := range hostileOps {
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("%s panicked: %v", op.name, p)
						}
					}()
					op.run(dir)
				}()
				expectSameTree(t, op.name, before, treeOf(t, out))
			}
		})
	}
}

var hostileOps = []struct {
	name string
	run  func(dir string)
}{
	{"OpenDir", func(dir string) {
		if d, err := savedir.OpenDir(nil, dir); err == nil {
			d.Close()
		}
	}},
	{"OpenWriter", func(dir string) {
		w, err := savedir.OpenWriter(dir, savedir.Options{Store: chunkstore.Options{
			ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize, Generator: savetest.Generator}})
		if err == nil {
			w.Close()
		}
	}},
	{"the game loading", func(dir string) { playAndSave(dir, true) }},
	{"the game starting over", func(dir string) { playAndSave(dir, false) }},
	{"savetool.Check", func(dir string) { checkDir(nil, dir) }},
	{"inspect", func(dir string) { savetool.InspectDir(dir, savetool.Options{}) }},
	{"render", func(dir string) { savetool.RenderDir(dir, savetool.RenderOptions{}) }},
	{"export", func(dir string) { savetool.ExportJSON(io.Discard, dir, 0, savetool.Options{}) }},
	{"repair --dry-run", func(dir string) { savetool.Repair(dir, savetool.RepairOptions{DryRun: true}) }},
	{"restore", func(dir string) { savetool.Restore(dir, 2, savetool.Options{}) }},
	{"compact", func(dir string) { savetool.Compact(dir, savetool.CompactOptions{MaxBackups: 0}) }},
	{"migrate", func(dir string) { savetool.Migrate(dir, savetool.Options{}) }},
	{"repair", func(dir string) { savetool.Repair(dir, savetool.RepairOptions{}) }},
	{"the game after the repair", func(dir string) { playAndSave(dir, true) }},
}

// playAndSave installs the test game on dir and, when that works, saves
// twice (a backup is written, old ones pruned) and closes.
func playAndSave(dir string, load bool) {
	g, err := savetest.Open(dir, load)
	if err != nil {
		return
	}
	defer g.Close()
	g.Tick()
	g.Save()
	g.Save()
}

type entry struct {
	mode fs.FileMode
	mod  time.Time
	data string
}

// treeOf describes every entry below dir, symbolic links as links.
func treeOf(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	must(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		en := entry{mode: fi.Mode(), mod: fi.ModTime()}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			en.data = string(data)
		}
		out[p] = en
		return nil
	}))
	return out
}

func expectSameTree(t *testing.T, after string, before, now map[string]entry) {
	t.Helper()
	for p, b := range before {
		n, ok := now[p]
		switch {
		case !ok:
			t.Errorf("after %s: %s outside the save directory was removed", after, p)
		case n.mode != b.mode || n.data != b.data:
			t.Errorf("after %s: %s outside the save directory changed", after, p)
		case !n.mod.Equal(b.mod):
			t.Errorf("after %s: %s outside the save directory was written (mtime %v, was %v)", after, p, n.mod, b.mod)
		}
	}
	for p := range now {
		if _, ok := before[p]; !ok {
			t.Errorf("after %s: %s appeared outside the save directory", after, p)
		}
	}
}
