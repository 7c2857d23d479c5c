package cli

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// dirFiles reads every file under dir (savetest.Files).
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	f, err := savetest.Files(dir)
	must(t, err)
	return f
}

// The committed saves of 8- and 2-byte pixels whose values all fit: check
// names arksave migrate, the dry run says what would happen and writes
// nothing, migrate commits a new generation of 4-byte pixels and keeps the
// old one as a backup, check is clean after, and the game loads every
// chunk and body as the same save written with 4-byte pixels holds them.
func TestMigratePixelSize(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref")
	must(t, savetest.BuildPixels(ref))
	want, err := savetest.Read(ref)
	must(t, err)
	for _, c := range []struct {
		name  string
		build func(string) error
		from  string
	}{{"8", savetest.BuildPixel8, "8-byte"}, {"2", savetest.BuildPixel2, "2-byte"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "save")
			must(t, c.build(dir))
			before := dirFiles(t, dir)

			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 1, code, stderr)
			expectContains(t, stdout, "the file stores "+c.from+" pixels, the game 4-byte", "arksave migrate "+dir, "repair would not")

			code, stdout, stderr = arksave("migrate", "--dry-run", dir)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "chunk store: "+c.from+" pixels would become 4-byte; every stored value fits", "dry run: nothing was written")
			if d := savetest.SameFiles(dirFiles(t, dir), before); d != "" {
				t.Fatalf("the dry run wrote: %s", d)
			}

			code, stdout, stderr = arksave("migrate", dir)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "committed generation 3", "chunk store: "+c.from+" pixels -> 4-byte")

			code, stdout, stderr = arksave("check", dir)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "no problems found", "1 delta, 1 full, 1 bodies, 1 palette")

			expectPixelBackup(t, dir)
			expectLoads(t, dir, want)
		})
	}
}

// expectPixelBackup checks that the generation a migration started from
// is a backup whose store still has its old pixels, and that the committed
// one has 4-byte pixels.
func expectPixelBackup(t *testing.T, dir string) {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	defer d.Close()
	m := d.Manifest()
	if m.Generation != 3 || !slices.ContainsFunc(d.Backups(), func(b *savedir.Manifest) bool { return b.Generation == 2 }) {
		t.Fatalf("generation %d, backups %v: want 3 with generation 2 kept", m.Generation, len(d.Backups()))
	}
	s, err := savetest.OpenPixelStore(dir)
	must(t, err)
	defer s.Close()
	if p := storetool.Tool.PixelSize(s); p != 4 {
		t.Errorf("the migrated store has %d-byte pixels", p)
	}
}

// expectLoads installs the game over dir and compares what it loads, and
// the save as the game reads it, with want.
func expectLoads(t *testing.T, dir string, want *savetest.Contents) {
	t.Helper()
	got, err := savetest.Read(dir)
	must(t, err)
	if d := savetest.Diff(got, want); d != "" {
		t.Fatalf("migrated save: %s", d)
	}
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())
	for _, pos := range []chunkstore.Pos{savetest.PixelDeltaAt, savetest.PixelFullAt, savetest.PixelPaletteAt} {
		pix, ok := g.LoadedPixels(pos)
		if !ok || !slices.Equal(pix, want.Chunks[pos]) {
			t.Errorf("the game's chunk %v (loaded %v) differs from the save written with 4-byte pixels", pos, ok)
		}
	}
	if full, _ := g.LoadedPixels(savetest.PixelFullAt); len(full) > savetest.MarkerPixel && full[savetest.MarkerPixel] != savetest.PixelMarker {
		t.Errorf("pixel %d of the Full chunk is %#x, want %#x", savetest.MarkerPixel, full[savetest.MarkerPixel], savetest.PixelMarker)
	}
}

// The committed save of 8-byte pixels of which one does not fit in 32
// bits: check, the dry run and migrate name the chunk, the pixel and the
// value, and nothing in the directory changes.
func TestMigratePixelSizeRefusedWhenAValueDoesNotFit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.BuildPixel8Misfit(dir))
	before := dirFiles(t, dir)
	const where = "chunk (1, 0), pixel 229 holds 0xab0000007eee"

	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, where, "does not fit in the game's 4-byte pixel")

	code, stdout, stderr = arksave("migrate", "--dry-run", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "8-byte pixels cannot become 4-byte", where, "migrate would write nothing", "dry run: nothing was written")

	code, _, stderr = arksave("migrate", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, where, "nothing was written")

	_, err := savetool.Migrate(dir, savetool.Options{})
	if !errors.Is(err, chunkstore.ErrConfigMismatch) || !strings.Contains(err.Error(), where) {
		t.Errorf("Migrate: %v, want ErrConfigMismatch naming %q", err, where)
	}
	if d := savetest.SameFiles(dirFiles(t, dir), before); d != "" {
		t.Fatalf("a refused migration changed the directory: %s", d)
	}
}
