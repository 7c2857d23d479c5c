package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

var updateMap = flag.Bool("update-map", false, "write the rendered map of the demo's save to assets/map.png")

var (
	toolOnce sync.Once
	toolBin  string
	toolErr  error
	toolOut  []byte
)

// tool builds the arksave command once per test run.
func tool(t *testing.T) string {
	t.Helper()
	toolOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arksave-tool-e2e")
		if err != nil {
			toolErr = err
			return
		}
		toolBin = filepath.Join(dir, "arksave")
		toolOut, toolErr = exec.Command("go", "build", "-o", toolBin, "github.com/arksave/arksave/cmd/arksave").CombinedOutput()
	})
	if toolErr != nil {
		t.Fatalf("building arksave: %v\n%s", toolErr, toolOut)
	}
	return toolBin
}

// run runs the arksave command and returns its output and exit status.
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool(t), args...).CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("arksave %v: %v", args, err)
	}
	return string(out), code
}

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	out, code := run(t, args...)
	if code != 0 {
		t.Fatalf("arksave %v exited %d:\n%s", args, code, out)
	}
	return out
}

var (
	saveOnce sync.Once
	saveDir  string
)

// demoSave is a save made by the headless demo: chunks it painted and dug,
// bodies it dropped, chunks unloaded and reloaded, several autosaves and
// two backups. Tests copy it before they change it.
func demoSave(t *testing.T) string {
	t.Helper()
	saveOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arksave-demo-save")
		if err != nil {
			t.Fatal(err)
		}
		saveDir = filepath.Join(dir, "world")
		headless(t, "-ticks", "900", "-seed", "3", "-chunk", "128", "-autosave", "2s", "-backups", "2", "-save", saveDir)
	})
	if saveDir == "" {
		t.Fatal("no demo save")
	}
	return saveDir
}

func copySave(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "world")
	if err := savetest.CopyDir(demoSave(t), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Every command of the arksave tool on a save the headless demo made.
func TestToolOnDemoSave(t *testing.T) {
	dir := copySave(t)

	var info struct {
		Generations []json.RawMessage `json:"generations"`
	}
	out := runOK(t, "inspect", "--json", dir)
	if err := json.Unmarshal([]byte(out), &info); err != nil || len(info.Generations) < 3 {
		t.Fatalf("inspect --json: %v, %d generations:\n%.600s", err, len(info.Generations), out)
	}
	if out := runOK(t, "inspect", dir); !strings.Contains(out, "generation") {
		t.Fatalf("inspect says nothing of generations:\n%s", out)
	}
	runOK(t, "check", dir)

	out = runOK(t, "export", "--json", dir)
	var export map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &export); err != nil || export["world"] == nil || export["chunks"] == nil {
		t.Fatalf("export --json: %v; keys %v", err, keys(export))
	}

	png1 := filepath.Join(t.TempDir(), "map.png")
	runOK(t, "render", "-o", png1, "--grid", dir)
	expectPicture(t, png1)

	before := contents(t, dir)
	precompact := manifest(t, dir).Generation
	out = runOK(t, "compact", "--whole", dir)
	runOK(t, "check", dir)
	expectSame(t, "compact", before, contents(t, dir), nil)
	if m := manifest(t, dir); m.Generation != precompact+1 || m.Chunks.Name == "chunks.pxsw" {
		t.Fatalf("compact --whole committed generation %d in %s, want %d in a new store file:\n%s", m.Generation, m.Chunks.Name, precompact+1, out)
	}

	// The generation before the compaction is a backup now, in the old file.
	runOK(t, "restore", "--generation", fmt.Sprint(precompact), dir)
	runOK(t, "check", dir)
	expectSame(t, "restore", before, contents(t, dir), nil)

	runOK(t, "migrate", dir)
	runOK(t, "repair", dir)
	runOK(t, "check", dir)

	// The game carries on from the save the tool wrote.
	st := headless(t, "-ticks", "60", "-autosave", "0", "-load", "-chunk", "128", "-save", dir)
	if !st.Loaded || st.Problems != 0 || st.FailedSaves != 0 {
		t.Fatalf("the demo does not load the save after the tool's commands: %+v", st)
	}
}

// damages are ways a save gets damaged, named after their defect.
var damages = []struct {
	name  string
	apply func(t *testing.T, dir string)
	file  string // the file check must name
}{
	{"flipped-manifest-byte", func(t *testing.T, dir string) { flipAt(t, filepath.Join(dir, "manifest"), 40) }, "manifest"},
	{"flipped-world-byte", func(t *testing.T, dir string) { flipAt(t, worldFile(t, dir), 100) }, ".pecs"},
	{"both-header-slots-flipped", func(t *testing.T, dir string) {
		flipAt(t, storeFile(t, dir), 20)
		flipAt(t, storeFile(t, dir), 64+20)
	}, ".pxsw"},
	{"flipped-chunk-record", func(t *testing.T, dir string) {
		s := openStore(t, dir)
		var h storetool.Handle
		storetool.Tool.Entries(s, func(e storetool.Entry) bool {
			if e.Type == chunkstore.Delta || e.Type == chunkstore.Full || e.Type == chunkstore.Palette {
				h = e.Handle
			}
			return h.IsZero()
		})
		s.Close()
		flipAt(t, dataFile(t, dir, h), h.FileOffset()+int64(h.Length)/2)
	}, ".pxsd"},
	{"truncated-data-file", func(t *testing.T, dir string) {
		newest := newestDataFile(t, dir)
		fi, err := os.Stat(newest)
		must(t, err)
		must(t, os.Truncate(newest, fi.Size()*2/3))
	}, ".pxsd"},
	{"deleted-data-file", func(t *testing.T, dir string) { must(t, os.Remove(newestDataFile(t, dir))) }, ".pxsd"},
	{"deleted-manifest", func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "manifest"))) }, "manifest"},
	{"deleted-world-file", func(t *testing.T, dir string) { must(t, os.Remove(worldFile(t, dir))) }, ".pecs"},
}

// On damaged copies of the demo's save: check finds the damage and exits 1,
// repair recovers everything else (every chunk it does not report as lost
// reads back exactly as saved), check then passes, and the demo loads it.
func TestToolOnDamagedDemoSaves(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := copySave(t)
			before := contents(t, dir)
			d.apply(t, dir)

			out, code := run(t, "check", dir)
			if code != 1 || !strings.Contains(out, "problems found") && !strings.Contains(out, "problem found") || !strings.Contains(out, d.file) {
				t.Fatalf("check of %s exited %d, want 1 naming %s:\n%s", d.name, code, d.file, out)
			}

			rep, err := savetool.Repair(dir, savetool.RepairOptions{})
			if err != nil {
				t.Fatalf("repair of %s: %v", d.name, err)
			}
			runOK(t, "check", dir)
			t.Logf("repair: kept %+v; dropped %v; reverted %v; notes %v", rep.Kept, rep.Dropped, rep.Reverted, rep.Notes)
			lost := map[chunkstore.Pos]bool{}
			for _, l := range append(rep.Dropped, rep.Reverted...) {
				lost[l.Pos] = true
			}
			after := contents(t, dir)
			// Chunks first written after a truncation point leave no trace the
			// repair could name them by (their page table is gone); it must
			// then say how many were lost.
			unnamed := 0
			for p := range before {
				if _, ok := after[p]; !ok && !lost[p] {
					unnamed++
					lost[p] = true
				}
			}
			if unnamed > 0 && !strings.Contains(strings.Join(rep.Notes, " "), fmt.Sprintf("%d chunks", unnamed)) {
				t.Errorf("%d chunks vanished, and the repair's notes do not account for them: %v", unnamed, rep.Notes)
			}
			expectSame(t, d.name, before, after, lost)

			st := headless(t, "-ticks", "60", "-autosave", "0", "-load", "-chunk", "128", "-save", dir)
			if !st.Loaded || st.FailedSaves != 0 {
				t.Fatalf("the demo does not load the repaired save: %+v", st)
			}
		})
	}
}

// The demo's save drawn with the demo's own generator and colours: what
// RenderDir gives a game. With -update-map it becomes assets/map.png.
func TestRenderWithDemoGenerator(t *testing.T) {
	img, stats, err := savetool.RenderDir(demoSave(t), savetool.RenderOptions{
		Generator: terrain.Generator{},
		Palette:   demoPalette(),
		Grid:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered %v: %+v", img.Bounds(), *stats)
	path := filepath.Join(t.TempDir(), "map.png")
	if *updateMap {
		path = filepath.Join("..", "..", "..", "assets", "map.png")
	}
	f, err := os.Create(path)
	must(t, err)
	must(t, png.Encode(f, img))
	must(t, f.Close())
	expectPicture(t, path)
}

// demoPalette is the demo's colours, with its sky behind air, for savetool.
func demoPalette() savetool.Palette { return render.MapPalette() }

var expect, must = testkit.Expect, testkit.Must

func keys(m map[string]json.RawMessage) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

func flipAt(t *testing.T, path string, off int64) {
	t.Helper()
	must(t, savetest.Flip(path, off))
}

func manifest(t *testing.T, dir string) *savedir.Manifest {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	m := d.Manifest()
	if m == nil {
		t.Fatalf("%s has no manifest: %v", dir, d.ManifestErr())
	}
	return m
}

func worldFile(t *testing.T, dir string) string {
	return filepath.Join(dir, filepath.FromSlash(manifest(t, dir).World.Name))
}

func storeFile(t *testing.T, dir string) string {
	return filepath.Join(dir, filepath.FromSlash(manifest(t, dir).Chunks.Name))
}

// dataFile returns the path of the data file that holds the record at h.
func dataFile(t *testing.T, dir string, h storetool.Handle) string {
	return storetool.Tool.DataFileName(storeFile(t, dir), h.File())
}

// newestDataFile returns the path of the last data file the manifest names.
func newestDataFile(t *testing.T, dir string) string {
	data := manifest(t, dir).Chunks.Data
	if len(data) == 0 {
		t.Fatal("the manifest names no data file")
	}
	return filepath.Join(dir, data[len(data)-1])
}

// openStore opens the committed chunk store generation read-only.
func openStore(t *testing.T, dir string) *chunkstore.Store {
	t.Helper()
	m := manifest(t, dir)
	s, err := chunkstore.Open(storeFile(t, dir), &chunkstore.Options{ReadOnly: true, Root: m.Chunks.Root})
	must(t, err)
	return s
}

// contents fingerprints every stored chunk and body set of the committed
// generation, as stored.
func contents(t *testing.T, dir string) map[chunkstore.Pos]string {
	t.Helper()
	s := openStore(t, dir)
	defer s.Close()
	out := map[chunkstore.Pos]string{}
	var positions []chunkstore.Pos
	s.Entries(func(e chunkstore.Entry) bool {
		positions = append(positions, e.Pos)
		return true
	})
	for _, p := range positions {
		h := fnv.New64a()
		raw, ok, err := storetool.Tool.ReadRaw(s, p)
		must(t, err)
		if ok {
			fmt.Fprint(h, raw.Type, raw.Delta, raw.Pixels, raw.Extra)
		}
		bodies, err := s.Bodies(p)
		must(t, err)
		for _, b := range bodies {
			fmt.Fprint(h, b.ID, b.X, b.Y, b.Rotation, b.VX, b.VY, b.Pixels, b.Shape, b.Extension)
		}
		out[p] = fmt.Sprintf("%x", h.Sum64())
	}
	return out
}

func expectSame(t *testing.T, what string, before, after map[chunkstore.Pos]string, lost map[chunkstore.Pos]bool) {
	t.Helper()
	if len(before) == 0 {
		t.Fatal("the demo's save holds no chunks")
	}
	kept := 0
	for p, fp := range before {
		if lost[p] {
			continue
		}
		if after[p] != fp {
			t.Errorf("%s: chunk %v changed (and was not reported lost)", what, p)
		}
		kept++
	}
	for p := range after {
		if _, ok := before[p]; !ok && !lost[p] {
			t.Errorf("%s: chunk %v appeared (and was not reported reverted)", what, p)
		}
	}
	if kept == 0 && len(lost) < len(before) {
		t.Errorf("%s: nothing kept", what)
	}
}

// expectPicture checks that a PNG shows something: many colours, not one.
func expectPicture(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	must(t, err)
	colors := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colors[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	if b.Dx() < 64 || b.Dy() < 64 || len(colors) < 20 {
		t.Fatalf("%s: %v with %d colours is not a picture of a world", path, b, len(colors))
	}
	_ = image.Rect
	_ = bytes.NewReader
}
