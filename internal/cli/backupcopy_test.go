package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

// freshWithCopies returns a copy of a save whose backups have chunk stores
// of their own, and whose committed generation's copy waits in backups/:
// as writers before mirrors made them (a committed fixture).
func freshWithCopies(t *testing.T) string { return savetest.FreshWithCopies(t, base) }

func flipMiddle(t *testing.T, path string) { must(t, savetest.FlipMiddle(path)) }

// renderPNG renders the save in dir with arksave render over the chunks the
// test game loads, and returns the PNG.
func renderPNG(t *testing.T, dir string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "render.png")
	code, _, stderr := arksave("render", "--region=-64,-64,96,96", "-q", "-o", out, dir)
	expectCode(t, 0, code, stderr)
	data, err := os.ReadFile(out)
	must(t, err)
	return data
}

// arksave check verifies the copy of the committed generation's chunk
// store made for its backup, which a load falls back to first: damage in
// it alone fails the check, naming the file.
func TestCheckNamesADamagedBackupCopy(t *testing.T) {
	for _, f := range []string{"backups/chunks-3-data-1.pxsd", "backups/chunks-2-data-1.pxsd"} {
		t.Run(f, func(t *testing.T) {
			dir := freshWithCopies(t)
			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 0, code, stderr+stdout)
			flipMiddle(t, filepath.Join(dir, f))
			code, stdout, stderr = arksave("check", dir)
			expectCode(t, 1, code, stderr)
			expectProblems(t, stdout, f)
		})
	}
}

// arksave check verifies every copy of the players a load or its fallback
// may read: the copy of the committed generation's players made for its
// backup (which no manifest names yet) and a backup's own copy. Damage in
// one alone fails the check, naming the file; the players indexes checked
// are counted.
func TestCheckNamesADamagedPlayersCopy(t *testing.T) {
	for _, f := range []string{"backups/players-3.pxpd", "backups/players-3.pxpl", "backups/players-2.pxpd"} {
		t.Run(f, func(t *testing.T) {
			dir := savetest.FreshWithPlayers(t, base)
			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 0, code, stderr+stdout)
			expectContains(t, stdout, "4 players indexes checked")
			flipMiddle(t, filepath.Join(dir, f))
			code, stdout, stderr = arksave("check", dir)
			expectCode(t, 1, code, stderr)
			expectProblems(t, stdout, f)
			expectContains(t, stdout, "4 players indexes checked")
		})
	}
}

// arksave repair keeps what a load keeps: with the committed chunk store
// removed, the repaired save renders as the save a load falls back to (the
// copy of the generation's store), and loads the same ECS world; a damaged
// copy is made again, saying so. check is clean afterwards.
func TestRepairRendersAsTheLoad(t *testing.T) {
	for _, tc := range []struct {
		name, file, says string
		damage           func(t *testing.T, path string)
	}{
		{"deleted-store", "chunks.pxsw", "chunks: backups/chunks-3.pxsw", func(t *testing.T, p string) { must(t, os.Remove(p)) }},
		{"flipped-copy", "backups/chunks-3-data-1.pxsd", "note: made backups/chunks-3.pxsw again", flipMiddle},
	} {
		t.Run(tc.name, func(t *testing.T) { repairRendersAsTheLoad(t, freshWithCopies(t), tc.file, tc.says, tc.damage) })
	}
}

// arksave check verifies the mirrors in backups/, which a load reads when
// a file it shares is damaged: damage in one alone fails the check, naming
// it; an intact save with mirrors checks clean.
func TestCheckNamesADamagedMirror(t *testing.T) {
	for _, f := range []string{"backups/mirror-chunks-data-1.pxsd", "backups/mirror-players.pxpd", "backups/mirror-players-3.pxpl"} {
		t.Run(f, func(t *testing.T) {
			dir := savetest.FreshWithMirrors(t, base)
			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 0, code, stderr+stdout)
			flipMiddle(t, filepath.Join(dir, f))
			code, stdout, stderr = arksave("check", dir)
			expectCode(t, 1, code, stderr)
			expectProblems(t, stdout, f)
		})
	}
}

// arksave repair keeps what a load keeps with mirrors: a lost data file
// comes back from its mirror (the generation kept, as the load keeps it),
// a damaged mirror is made again from its file; the repaired save renders
// as the loaded one, loads the same ECS world, and checks clean.
func TestRepairRendersAsTheLoadWithMirrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, says string
		damage           func(t *testing.T, path string)
	}{
		{"deleted-data-file", "chunks-data-1.pxsd", "note: chunks-data-1.pxsd: restored from its mirror backups/mirror-chunks-data-1.pxsd",
			func(t *testing.T, p string) { must(t, os.Remove(p)) }},
		{"flipped-mirror", "backups/mirror-chunks-data-1.pxsd", "note: backups/mirror-chunks-data-1.pxsd is damaged: removed, and made again from its file", flipMiddle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repairRendersAsTheLoad(t, savetest.FreshWithMirrors(t, base), tc.file, tc.says, tc.damage)
		})
	}
}

// repairRendersAsTheLoad damages file of the save in dir, loads a copy of
// it, repairs it with arksave repair, whose report must say says, and
// checks that the repaired save renders and scores as the loaded one and
// checks clean.
func repairRendersAsTheLoad(t *testing.T, dir, file, says string, damage func(t *testing.T, path string)) {
	t.Helper()
	damage(t, filepath.Join(dir, file))
	loaded := filepath.Join(t.TempDir(), "loaded")
	must(t, savetest.CopyDir(dir, loaded))
	score := loadsScore(t, loaded)
	want := renderPNG(t, loaded)

	code, stdout, stderr := arksave("repair", dir)
	expectCode(t, 0, code, stderr+stdout)
	expectContains(t, stdout, says, "no problems found")
	if !bytes.Equal(renderPNG(t, dir), want) {
		t.Errorf("the repaired save renders differently from the loaded one\n%s", stdout)
	}
	code, stdout, stderr = arksave("check", dir)
	expectCode(t, 0, code, stderr+stdout)
	if s := loadsScore(t, dir); s != score {
		t.Errorf("the repaired save scores %d, the loaded one %d", s, score)
	}
}
