package mapserve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// A save whose current data file was cut short (a disk that filled, a copy
// that stopped) still serves: the map opens with the index rebuilt from
// what reads, a chunk whose record was cut is listed, described and drawn
// as damaged (hatched red), and the world's warnings name arksave repair.
func TestServeTruncatedDataFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.CopyDir(base, dir))
	data := filepath.Join(dir, "chunks-data-1.pxsd")
	st, err := os.Stat(data)
	must(t, err)
	must(t, os.Truncate(data, st.Size()/2))

	_, ts := newServer(t, dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	var w world
	getJSON(t, ts, "/api/world", &w)
	expect(t, w.Generation == 3, "generation %d", w.Generation)
	warned := strings.Join(w.Warnings, "\n")
	for _, part := range []string{"chunks.pxsw of generation 3 is damaged", "the generation stored 6 chunks", "arksave repair " + dir, "arksave check " + dir} {
		expect(t, strings.Contains(warned, part), "the warnings lack %q: %q", part, w.Warnings)
	}
	var damaged []string
	for _, c := range w.Chunks {
		if c.Kind == "damaged" {
			damaged = append(damaged, fmt.Sprint(c.X, c.Y))
		}
	}
	expect(t, len(damaged) > 0, "no chunk listed as damaged: %+v", w.Chunks)

	const n = savetest.ChunkSize
	for _, c := range w.Chunks {
		if c.Kind != "damaged" {
			continue
		}
		var ch struct {
			Kind, Drawn, Error string
		}
		getJSON(t, ts, fmt.Sprintf("/api/chunk?x=%d&y=%d", c.X, c.Y), &ch)
		expect(t, ch.Kind == "damaged" && strings.HasPrefix(ch.Drawn, "hatched red") && strings.Contains(ch.Error, "unexpected EOF"),
			"chunk (%d, %d): %+v", c.X, c.Y, ch)

		// Its pixels on the level-0 tile are the red hatch.
		px, py := int(c.X)*n, int(c.Y)*n
		tx, ty := floorDiv(px, mapserve.TileSize), floorDiv(py, mapserve.TileSize)
		img, _ := getTile(t, ts, fmt.Sprintf("/api/tiles/0/%d/%d.png", tx, ty))
		red := 0
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				o := img.PixOffset(px-tx*mapserve.TileSize+x, py-ty*mapserve.TileSize+y)
				if p := img.Pix[o : o+3]; p[0] == 0xb0 && p[1] == 0x20 && p[2] == 0x20 || p[0] == 0x60 && p[1] == 0x10 && p[2] == 0x10 {
					red++
				}
			}
		}
		expect(t, red > n*n/2, "chunk (%d, %d): %d of %d pixels drawn in the damaged hatch", c.X, c.Y, red, n*n)
	}
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
