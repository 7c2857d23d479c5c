package mapserve_test

import (
	"bytes"
	"image"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	arksave "github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/mapserve"
)

// A save written with Plugin.Key is served with Options.Key: its tiles are
// what render draws with the key. Without the key a tile fails, naming
// the key, and draws nothing of the world.
func TestServeEncryptedSave(t *testing.T) {
	key := bytes.Repeat([]byte{0x3c}, 32)
	dir := filepath.Join(t.TempDir(), "save")
	g := gametest.New(t, gametest.Opts{Dir: dir, Radius: 1, Autosave: gametest.NoBackupCopy(),
		Plugin: func(p *arksave.Plugin) { p.Key = key }})
	g.Settle(t)
	for i := range 64 {
		g.Paint(t, 0, 0, i%gametest.ChunkSize, i/gametest.ChunkSize, components.MakePixel(9, uint8(i%4), 0, 0))
	}
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())

	_, ts := newServer(t, dir, mapserve.Options{Poll: -1, Key: key})
	img, _ := getTile(t, ts, "/api/tiles/0/0/0.png")
	want, _, err := savetool.RenderDir(dir, savetool.RenderOptions{Options: savetool.Options{Key: key}, Region: image.Rect(0, 0, gametest.ChunkSize, gametest.ChunkSize)})
	must(t, err)
	for y := range gametest.ChunkSize {
		for x := range gametest.ChunkSize {
			expect(t, img.RGBAAt(x, y) == want.RGBAAt(x, y), "pixel %d,%d: %v, render draws %v", x, y, img.RGBAAt(x, y), want.RGBAAt(x, y))
		}
	}

	_, ts = newServer(t, dir, mapserve.Options{Poll: -1})
	r := get(t, ts, "/api/tiles/0/0/0.png")
	expect(t, r.status == http.StatusInternalServerError && strings.Contains(string(r.body), "--key-file"),
		"a tile of the encrypted save without the key: %d %s", r.status, r.body)
}
