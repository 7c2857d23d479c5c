package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/ndsave"
	"github.com/arksave/arksave/vfs"
)

// ndSave builds a save of n axes in a temporary directory.
func ndSave(t *testing.T, n int) *ndsave.Save {
	t.Helper()
	return ndsave.Build(t, filepath.Join(t.TempDir(), "save"), n)
}

// forAxes runs fn on a save of 3 axes and one of 4.
func forAxes(t *testing.T, fn func(t *testing.T, s *ndsave.Save)) {
	ndsave.ForAxes(t, func(t *testing.T, n int) { fn(t, ndSave(t, n)) })
}

// expectSameChunks compares the committed generation of the save at dir
// with want, chunk by chunk and body set by body set.
func expectSameChunks(t *testing.T, dir string, want *ndsave.Save) {
	t.Helper()
	got := ndsave.Read(t, vfs.OS, dir, want.Axes)
	expectEqualChunks(t, got.Chunks, want.Chunks)
	if len(got.Bodies) != len(want.Bodies) {
		t.Fatalf("%d body sets, want %d", len(got.Bodies), len(want.Bodies))
	}
	for k, b := range want.Bodies {
		if len(got.Bodies[k]) != len(b) || got.Bodies[k][0].ID != b[0].ID {
			t.Fatalf("bodies at %v: %+v, want %+v", k, got.Bodies[k], b)
		}
	}
}

func expectEqualChunks(t *testing.T, got, want map[chunkstore.Key][]uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d chunks, want %d", len(got), len(want))
	}
	for k, pix := range want {
		if !slices.Equal(got[k], pix) {
			t.Fatalf("chunk %v differs", k)
		}
	}
}

// render --at draws the 2-D slice it names of a save of 3 or 4 axes: every
// pixel of a chunk stored in the slice is that chunk's (the changed ones
// of a Delta chunk, drawn over grey without the game's generator), and a
// chunk of another slice at the same x and y is not drawn; an axis the
// store does not have is a usage error.
func TestRenderSliceOfMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		n := s.Axes
		pal := savetool.DefaultPalette()
		for _, at := range [][2]int32{{1, -1}, {-1, 1}, {0, 0}, {-2, 3}} {
			out := filepath.Join(t.TempDir(), "slice.png")
			arg := fmt.Sprintf("z=%d,w=%d", at[0], at[1])
			if n == 3 {
				arg = fmt.Sprintf("z=%d", at[0])
			}
			code, stdout, stderr := arksave("render", "-q", "-o", out, "--no-bodies", "--region", "-16,-16,48,32", "--at", arg, s.Dir)
			expectCode(t, 0, code, stderr)
			img := readPNG(t, out)
			drawn := 0
			for k, pix := range s.Chunks {
				if k.Axis(2) != at[0] || n == 4 && k.Axis(3) != at[1] {
					continue
				}
				drawn++
				base := ndsave.Generated(k)
				for i, p := range pix {
					if s.Types[k] == chunkstore.Delta && p == base[i] {
						continue // over grey: no generator at hand
					}
					x, y := int(k.Axis(0))*ndsave.ChunkSize+i%ndsave.ChunkSize, int(k.Axis(1))*ndsave.ChunkSize+i/ndsave.ChunkSize
					if got, want := color.RGBAModel.Convert(img.At(x+16, y+16)), pal.Color(p); got != want {
						t.Fatalf("--at %s: pixel %d of chunk %v drawn %v, want %v (%08x)", arg, i, k, got, want, p)
					}
				}
			}
			if drawn == 0 {
				t.Fatalf("--at %s: the save has no chunk in the slice", arg)
			}
			expectContains(t, stdout, fmt.Sprintf("%d stored chunks", drawn))
		}
		bad := "w=1"
		if n == 4 {
			bad = "z=0,w=1,v=2"
		}
		code, _, stderr := arksave("render", "-o", filepath.Join(t.TempDir(), "x.png"), "--at", bad, s.Dir)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "--at")
	})
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	must(t, err)
	return img
}

// export --json lists every stored chunk of a save of 3 or 4 axes with its
// whole key and type, and the bodies by key; import of that export
// commits its world as a new generation and the chunks stay as they were.
func TestExportImportMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		js := exportTo(t, s.Dir)
		var ex struct {
			Chunks savetool.StoredChunks `json:"chunks"`
		}
		must(t, json.Unmarshal(mustRead(t, js), &ex))
		if ex.Chunks.Axes != s.Axes {
			t.Fatalf("export says %d axes, want %d", ex.Chunks.Axes, s.Axes)
		}
		var keys []chunkstore.Key
		for _, c := range ex.Chunks.Chunks {
			if len(c.Key) != s.Axes || c.Key[0] != c.X || c.Key[1] != c.Y {
				t.Fatalf("entry %+v: key of %d axes, want %d", c, len(c.Key), s.Axes)
			}
			k := ndsave.Key(s.Axes, c.Key[0], c.Key[1], c.Key[2], c.Key[len(c.Key)-1])
			if c.Error != "" {
				t.Fatalf("%v: %s", k, c.Error)
			}
			if c.Type != "none" {
				keys = append(keys, k)
				if c.Type != s.Types[k].String() {
					t.Fatalf("%v: type %s, want %s", k, c.Type, s.Types[k])
				}
			}
			if len(c.Bodies) != len(s.Bodies[k]) {
				t.Fatalf("%v: %d bodies, want %d", k, len(c.Bodies), len(s.Bodies[k]))
			}
		}
		if !slices.Equal(keys, s.Keys()) {
			t.Fatalf("exported keys %v, want %v", keys, s.Keys())
		}

		code, stdout, stderr := arksave("import", "--into", s.Dir, js)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "as generation 3")
		expectSameChunks(t, s.Dir, s)
	})
}

// copy, compact and check on a save of 3 or 4 axes: the copy holds the
// same chunks in every generation, compaction keeps them, and the
// checker finds a damaged record and names its whole key.
func TestCopyCompactCheckMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		dst := filepath.Join(t.TempDir(), "copy")
		code, _, stderr := arksave("copy", "-q", s.Dir, dst)
		expectCode(t, 0, code, stderr)
		expectSameChunks(t, dst, s)
		d, err := savetoolOpen(dst)
		must(t, err)
		prev := ndsave.ReadGeneration(t, d, d.Backups()[0], s.Axes)
		d.Close()
		expectEqualChunks(t, prev.Chunks, s.Previous)
		back := filepath.Join(t.TempDir(), "back")
		code, _, stderr = arksave("copy", "-q", dst, back)
		expectCode(t, 0, code, stderr)
		expectSameChunks(t, back, s)

		code, stdout, stderr := arksave("compact", "-q", "--whole", s.Dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "as generation 3")
		expectSameChunks(t, s.Dir, s)
		code, stdout, stderr = arksave("check", s.Dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "no problems found")

		k := ndsave.Key(s.Axes, 0, 0, 1, -1) // a Delta chunk with bodies
		damageRecord(t, s.Dir, k)
		code, stdout, _ = arksave("check", s.Dir)
		expectCode(t, 1, code, "")
		expectContains(t, stdout, "chunk "+k.String())
		code, stdout, _ = arksave("check", "--json", s.Dir)
		expectCode(t, 1, code, "")
		want := fmt.Sprintf(`"key":[%d,%d,%d`, k.Axis(0), k.Axis(1), k.Axis(2))
		if s.Axes == 4 {
			want += fmt.Sprintf(",%d", k.Axis(3))
		}
		expectContains(t, strings.Join(strings.Fields(stdout), ""), want+"]")
	})
}

func damageRecord(t *testing.T, dir string, k chunkstore.Key) { ndsave.Damage(t, dir, k, false) }

func savetoolOpen(dir string) (*savedir.Dir, error) { return savedir.OpenDirReadOnly(vfs.OS, dir) }

// serve --at shows the 2-D slice it names of a save of 3 or 4 axes: the
// map lists the chunks of that slice alone, its tiles draw their pixels,
// and an axis the store does not have is a usage error.
func TestServeSliceOfMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		at := [2]int32{1, -1}
		arg := "z=1,w=-1"
		if s.Axes == 3 {
			at, arg = [2]int32{1, 0}, "z=1"
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		lines, done := startServeArgs(t, ctx, 1, "--at", arg, s.Dir)
		url := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/)`).FindString(lines[0])
		var w struct {
			Chunks []struct{ X, Y int32 }
		}
		must(t, json.Unmarshal(httpGet(t, url+"api/world"), &w))
		var want, listed []chunkstore.Key
		for _, k := range s.Keys() {
			if k.Axis(2) == at[0] && k.Axis(3) == at[1] {
				want = append(want, k)
			}
		}
		for _, c := range w.Chunks {
			listed = append(listed, ndsave.Key(s.Axes, c.X, c.Y, at[0], at[1]))
		}
		if len(want) == 0 || !slices.Equal(listed, want) {
			t.Fatalf("the map lists %v, want %v", listed, want)
		}
		pal := savetool.DefaultPalette()
		tiles := map[[2]int]image.Image{}
		for _, k := range want {
			base := ndsave.Generated(k)
			for i, p := range s.Chunks[k] {
				x, y := int(k.Axis(0))*ndsave.ChunkSize+i%ndsave.ChunkSize, int(k.Axis(1))*ndsave.ChunkSize+i/ndsave.ChunkSize
				if s.Types[k] == chunkstore.Delta && p == base[i] || len(s.Bodies[k]) > 0 && y < 4 {
					continue // over grey without a generator; under a body
				}
				tx, ty := floorDiv(x, 256), floorDiv(y, 256)
				img := tiles[[2]int{tx, ty}]
				if img == nil {
					data := httpGet(t, fmt.Sprintf("%sapi/tiles/0/%d/%d.png", url, tx, ty))
					var err error
					img, err = png.Decode(strings.NewReader(string(data)))
					must(t, err)
					tiles[[2]int{tx, ty}] = img
				}
				if got, want := color.RGBAModel.Convert(img.At(x-256*tx, y-256*ty)), pal.Color(p); got != want {
					t.Fatalf("pixel %d of chunk %v drawn %v, want %v", i, k, got, want)
				}
			}
		}
		cancel()
		must(t, <-done)

		bad := "w=2"
		if s.Axes == 4 {
			bad = "z=1,z=2"
		}
		code, _, stderr := arksave("serve", "--at", bad, s.Dir)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "--at")
	})
}

func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	must(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	must(t, err)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s: %s", url, res.Status, data)
	}
	return data
}

func floorDiv(a, b int) int {
	if a < 0 {
		return -((-a + b - 1) / b)
	}
	return a / b
}

// inspect, diff, restore and migrate on a save of 3 or 4 axes: inspect
// names the axes and counts every stored chunk and body; diff lists the
// chunks that changed by their whole key; restore makes the backup's
// chunks current again; migrate finds nothing to do.
func TestInspectDiffRestoreMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		code, stdout, stderr := arksave("inspect", s.Dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, []string{"", "", "", "keys        3 axes (x, y, z)", "keys        4 axes (x, y, z, w)"}[s.Axes],
			"chunks      8 stored: 3 full, 3 delta, 1 empty, 1 palette", "bodies      3 in 2 chunks")

		code, stdout, stderr = arksave("diff", s.Dir, "1", "current")
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, ndsave.Key(s.Axes, 0, 0, 1, -1).String()+" ", "13                   added    in "+ndsave.Key(s.Axes, 1, 0, -1, -1).String())
		code, stdout, stderr = arksave("diff", "--json", s.Dir, "1", "current")
		expectCode(t, 0, code, stderr)
		var d struct {
			Chunks []struct {
				Key  []int32
				Kind string
			}
		}
		must(t, json.Unmarshal([]byte(stdout), &d))
		changed := map[string]string{}
		for _, c := range d.Chunks {
			changed[fmt.Sprint(c.Key)] = c.Kind
		}
		axes := func(k chunkstore.Key) string { return fmt.Sprint(entryAxes(k)) }
		want := map[string]string{
			axes(ndsave.Key(s.Axes, 0, 0, 1, -1)): "changed", axes(ndsave.Key(s.Axes, -1, 1, 2, 1)): "removed",
			axes(ndsave.Key(s.Axes, 2, -1, -2, 3)): "added", axes(ndsave.Key(s.Axes, 2, 1, -3, -3)): "added",
		}
		if fmt.Sprint(changed) != fmt.Sprint(want) {
			t.Fatalf("diff lists %v, want %v", changed, want)
		}

		code, _, stderr = arksave("restore", "--generation", "1", s.Dir)
		expectCode(t, 0, code, stderr)
		got := ndsave.Read(t, vfs.OS, s.Dir, s.Axes)
		expectEqualChunks(t, got.Chunks, s.Previous)
		code, stdout, stderr = arksave("migrate", s.Dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "nothing to do")
	})
}

func entryAxes(k chunkstore.Key) []int32 {
	a := make([]int32, k.Axes())
	for i := range a {
		a[i] = k.Axis(i)
	}
	return a
}
