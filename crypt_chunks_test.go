package arksave_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"io/fs"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

const regionalSecret = "the-map-to-the-crown-is-in-the-crate"

// Distinctive pixels: chunk (0,0) is painted with them, a pixel body is
// made of them.
var (
	paintedPixels = [3]components.Pixel{components.MakePixel(201, 77, 0, 0), components.MakePixel(202, 78, 0, 0), components.MakePixel(203, 79, 0, 0)}
	bodyPixels    = []components.Pixel{components.MakePixel(211, 91, 0, 0), components.MakePixel(212, 92, 0, 0), components.MakePixel(213, 93, 0, 0), components.MakePixel(214, 94, 0, 0)}
)

// keyedGame installs the test game on /save of fsys with key (nil for
// none), its regional entities with a Diary, and a thumbnail.
func keyedGame(t *testing.T, fsys vfs.FS, load bool, key []byte) (*gametest.Game, error) {
	return gametest.Install(t, gametest.Opts{FS: fsys, Dir: "/save", Load: load, Radius: 1, Autosave: gametest.NoBackupCopy(),
		Prepare: func(w *ecs.World) {
			gametest.RegisterRegional(w)
			ecs.ComponentID[Diary](w)
		},
		Plugin: func(p *arksave.Plugin) {
			p.Key = key
			p.Thumbnail = func(*ecs.World) image.Image { return image.NewNRGBA(image.Rect(0, 0, 4, 4)) }
		}})
}

// saveSecretChunks saves a world whose chunk (0,0) is painted with
// paintedPixels, with a pixel body of bodyPixels and a regional entity
// whose Diary holds regionalSecret, and returns chunk (0,0)'s digest.
func saveSecretChunks(t *testing.T, fsys vfs.FS, key []byte) uint64 {
	t.Helper()
	g, err := keyedGame(t, fsys, false, key)
	must(t, err)
	g.Settle(t)
	for i := range gametest.ChunkSize * gametest.ChunkSize {
		g.Paint(t, 0, 0, i%gametest.ChunkSize, i/gametest.ChunkSize, paintedPixels[i*7%5%3])
	}
	ids := ecs.GetResource[components.BodyIDs](g.W)
	g.Bodies.NewEntity(&components.PixelBody{ID: ids.New(), X: 10, Y: 12, Width: 2, Height: 2,
		Pixels: bodyPixels, Shape: []bool{true, true, true, true}}, &components.Persistable{})
	ecs.NewMap3[gametest.Position, Diary, components.Regional](g.W).NewEntity(
		&gametest.Position{X: 5, Y: 6}, &Diary{Text: regionalSecret}, &components.Regional{})
	g.Tick() // the body and the entity are placed
	must(t, g.Pers.SaveNow().Err)
	g.Pers.WaitIdle()
	d := g.ChunkDigest(t, 0, 0)
	must(t, g.Pers.Close())
	return d
}

// secretsIn names the plaintexts of the secret world that the files of
// /save hold.
func secretsIn(t *testing.T, fsys vfs.FS) []string {
	t.Helper()
	le := func(p ...components.Pixel) []byte {
		var b []byte
		for _, v := range p {
			b = binary.LittleEndian.AppendUint32(b, uint32(v)&components.PersistMask)
		}
		return b
	}
	var found []string
	for name, b := range gametest.Files(t, fsys, "/save") {
		for what, p := range map[string][]byte{"the regional entity's text": []byte(regionalSecret),
			"the painted pixels": le(paintedPixels[1]), "the body's pixels": le(bodyPixels...)} {
			if bytes.Contains(b, p) {
				found = append(found, what+" in "+name)
			}
		}
	}
	return found
}

// With Plugin.Key, no file of the save holds the world's chunks, its pixel
// bodies or its regional entities in plaintext (the same save without a
// key holds them all), and no thumbnail is written; the save loads back
// exactly with the key, and without it or with another Install fails with
// ErrEncrypted or ErrWrongKey and changes no file.
func TestPluginKeyEncryptsChunks(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	plain := vfs.NewMem()
	saveSecretChunks(t, plain, nil)
	found := map[string]bool{}
	for _, f := range secretsIn(t, plain) {
		what, _, _ := strings.Cut(f, " in ")
		found[what] = true
	}
	expect(t, len(found) == 3, "without a key the files hold %v, want all three", found)
	_, err := plain.Stat("/save/" + savedir.ThumbnailName)
	expect(t, err == nil, "without a key no thumbnail: %v", err)

	mem := vfs.NewMem()
	digest := saveSecretChunks(t, mem, key)
	expect(t, len(secretsIn(t, mem)) == 0, "with the key the files hold %v", secretsIn(t, mem))
	_, err = mem.Stat("/save/" + savedir.ThumbnailName)
	expect(t, errors.Is(err, fs.ErrNotExist), "with a key thumbnail.png: %v", err)
	meta, err := savedir.ReadMeta(mem, "/save")
	must(t, err)
	expect(t, meta.Name == "save" && meta.Thumbnail == "", "meta.json: %+v", meta)

	d, err := savedir.OpenDir(mem, "/save") // what a load would clean up, first
	must(t, err)
	must(t, d.Close())
	before := gametest.Files(t, mem, "/save")
	for _, c := range []struct {
		name string
		key  []byte
		want error
	}{{"no key", nil, archetype.ErrEncrypted}, {"another key", bytes.Repeat([]byte{8}, 32), archetype.ErrWrongKey}} {
		_, err := keyedGame(t, mem, true, c.key)
		expect(t, errors.Is(err, c.want) && !errors.Is(err, arksave.ErrCorrupt), "%s: %v, want %v", c.name, err, c.want)
		gametest.ExpectSameFiles(t, before, gametest.Files(t, mem, "/save"))
	}

	g, err := keyedGame(t, mem, true, key)
	must(t, err)
	g.Settle(t)
	expect(t, g.ChunkDigest(t, 0, 0) == digest, "chunk (0,0) does not load as saved")
	expect(t, len(g.Pers.Problems()) == 0, "problems: %v", g.Pers.Problems())
	var texts []string
	q := ecs.NewFilter2[Diary, components.Regional](g.W).Query()
	for q.Next() {
		d, _ := q.Get()
		texts = append(texts, d.Text)
	}
	expect(t, len(texts) == 1 && texts[0] == regionalSecret, "regional entities: %q", texts)
	var bodies []components.PixelBody
	bq := ecs.NewFilter1[components.PixelBody](g.W).Query()
	for bq.Next() {
		bodies = append(bodies, *bq.Get())
	}
	expect(t, len(bodies) == 1 && slicesEqual(bodies[0].Pixels, bodyPixels), "bodies: %v", bodies)
}

func slicesEqual(a, b []components.Pixel) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if uint32(a[i])&components.PersistMask != uint32(b[i])&components.PersistMask {
			return false
		}
	}
	return true
}

// A flipped byte in an encrypted chunk record is damage, found without
// decrypting: the load with the key regenerates that chunk, reports it
// (ErrCorrupt), and loads the others.
func TestPluginKeyDamagedChunkRegenerates(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	mem := vfs.NewMem()
	digest := saveSecretChunks(t, mem, key)
	gametest.DropMirrors(t, mem)
	p, off, n := recordOf(t, mem, chunkstore.Pos{})
	gametest.FlipAt(t, mem, p, off+n/2)

	g, err := keyedGame(t, mem, true, key)
	must(t, err)
	g.Settle(t)
	c, _ := g.Chunk(t, 0, 0)
	want := make([]uint32, gametest.ChunkSize*gametest.ChunkSize)
	gametest.Gen{}.Generate(0, 0, 7, want)
	var same = true
	for i, px := range c.Pixels() {
		same = same && uint32(px)&components.PersistMask == want[i]&components.PersistMask
	}
	expect(t, same && g.ChunkDigest(t, 0, 0) != digest, "the damaged chunk (0,0) did not regenerate")
	var damaged bool
	for _, pr := range g.Pers.Problems() {
		damaged = damaged || (errors.Is(pr.Err, arksave.ErrCorrupt) && !errors.Is(pr.Err, archetype.ErrWrongKey) && strings.Contains(pr.Err.Error(), "chunk"))
	}
	expect(t, damaged, "no problem reports the damaged chunk: %v", g.Pers.Problems())
	var texts []string
	q := ecs.NewFilter1[Diary](g.W).Query()
	for q.Next() {
		texts = append(texts, q.Get().Text)
	}
	expect(t, len(texts) == 1 && texts[0] == regionalSecret, "regional entities: %q", texts)
}
