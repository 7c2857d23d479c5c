package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// base is a real save made by a game with the plugin, built once.
var base string

func TestMain(m *testing.M) { os.Exit(savetest.Main(m, &base)) }

// fresh returns a copy of the test save.
func fresh(t *testing.T) string { return savetest.Fresh(t, base) }

var must = testkit.Must

// loadsScore loads the save with the game and returns its Score.
func loadsScore(t *testing.T, dir string) int {
	t.Helper()
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())
	return ecs.GetResource[savetest.Score](g.W).Points
}

var problemsFound = regexp.MustCompile(`(?m)^(\d+) problems? found`)

// expectProblems checks check's listing: one line per problem, then the
// count, and each file named.
func expectProblems(t *testing.T, stdout string, files ...string) {
	t.Helper()
	m := problemsFound.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no \"N problems found\" line:\n%s", stdout)
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(stdout[:strings.Index(stdout, m[0])], "\n")
	if n == 0 || len(lines)-1 != n {
		t.Errorf("%d problems counted, %d listed:\n%s", n, len(lines)-1, stdout)
	}
	for _, f := range files {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f) + `[ :]`).MatchString(stdout) {
			t.Errorf("no problem in %s listed:\n%s", f, stdout)
		}
	}
}

func TestCommandsOnASave(t *testing.T) {
	dir := fresh(t)
	code, stdout, stderr := arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "generations:", "3    current  3", "2    backup", "chunk store chunks.pxsw:", "data files", "chunks-data-1.pxsd",
		"6 stored: 2 full, 3 delta, 1 empty", "2 in 2 chunks", "dead", "ECS world world-3.pecs:", "savetest.Player", "checksum    CRC32C")

	code, stdout, stderr = arksave("inspect", "--json", dir)
	expectCode(t, 0, code, stderr)
	var info struct {
		Generations []struct{ Generation uint64 }
		Stores      []struct{ Chunks, Bodies int }
		World       struct{ Checksum struct{ OK bool } }
	}
	must(t, json.Unmarshal([]byte(stdout), &info))
	if len(info.Generations) != 3 || info.Stores[0].Chunks != 6 || info.Stores[0].Bodies != 2 || !info.World.Checksum.OK {
		t.Errorf("inspect --json: %+v", info)
	}

	code, stdout, stderr = arksave("inspect", filepath.Join(dir, "chunks.pxsw"))
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "6 stored", "generator version 1")

	code, stdout, stderr = arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "generation 3 and 2 backups")
	for _, f := range []string{"chunks.pxsw", "world-3.pecs"} {
		code, stdout, stderr = arksave("check", filepath.Join(dir, f))
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "no problems found")
	}

	code, stdout, stderr = arksave("export", "--json", dir)
	expectCode(t, 0, code, stderr)
	var exp struct {
		Generation uint64
		World      struct {
			Tables []struct{ Entities []map[string]any }
		}
		Chunks struct {
			ChunkSize int `json:"chunk_size"`
			Chunks    []struct {
				X, Y   int32
				Type   string
				Bodies []struct{ ID uint64 }
			}
		}
	}
	must(t, json.Unmarshal([]byte(stdout), &exp))
	bodies := 0
	for _, c := range exp.Chunks.Chunks {
		bodies += len(c.Bodies)
	}
	if exp.Generation != 3 || len(exp.World.Tables) == 0 || len(exp.Chunks.Chunks) != 6 || bodies != 2 || exp.Chunks.ChunkSize != savetest.ChunkSize {
		t.Errorf("export: %+v", exp)
	}

	png1 := filepath.Join(t.TempDir(), "map.png")
	code, stdout, stderr = arksave("render", dir, "-o", png1, "--grid")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "96x96 pixels", "6 stored chunks (2 full, 3 delta", "2 bodies")
	expectPNG(t, png1, 96, 96)
	code, _, stderr = arksave("render", "--region=-40,-40,60,70", "--zoom", "3", "-o", png1, dir)
	expectCode(t, 0, code, stderr)
	expectPNG(t, png1, 300, 330)
	code, _, stderr = arksave("render", "--scale", "4", "-o", png1, "--generation", "1", dir)
	expectCode(t, 0, code, stderr)
	expectPNG(t, png1, 24, 16) // generation 1 stores chunks of rows 0 and 1 only
	pal := filepath.Join(t.TempDir(), "palette.json")
	must(t, os.WriteFile(pal, []byte(`{"air": "#000000", "materials": {"1": "#ff0000", "2": ["#00ff00", "#00aa00"]}}`), 0o644))
	code, _, stderr = arksave("render", "--palette", pal, "-o", png1, dir)
	expectCode(t, 0, code, stderr)

	code, stdout, stderr = arksave("migrate", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "nothing to do")

	code, stdout, stderr = arksave("restore", "--generation", "2", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "restored generation 2 as generation 4")
	if s := loadsScore(t, dir); s != 2 {
		t.Errorf("restored save scores %d", s)
	}

	code, stdout, stderr = arksave("compact", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "compacted chunks.pxsw data file by data file", "as generation 5", "save directory:")
	code, stdout, stderr = arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "generation 5 and 3 backups")
	if s := loadsScore(t, dir); s != 2 {
		t.Errorf("compacted save scores %d", s)
	}
	code, stdout, stderr = arksave("compact", "--whole", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "into chunks-6.pxsw", "as generation 6")
	code, stdout, stderr = arksave("compact", "--whole", "--backups", "0", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "into chunks-7.pxsw", "as generation 7")
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), "chunks.") || strings.HasPrefix(n.Name(), "chunks-data-") || strings.HasPrefix(n.Name(), "chunks-6") {
			t.Errorf("compact --backups 0 left %s", n.Name())
		}
	}

	code, stdout, stderr = arksave("repair", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "nothing to repair")
}

func expectPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	img := readPNG(t, path)
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

// check finds and lists every damage, repair mends it, and afterwards check
// passes and the game loads the save.
func TestCheckAndRepairDamagedSaves(t *testing.T) {
	for _, tc := range savetest.Damages {
		t.Run(tc.Name, func(t *testing.T) {
			dir := fresh(t)
			l, err := savetest.LayoutOf(dir)
			must(t, err)
			must(t, tc.Apply(dir, l))

			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 1, code, stderr)
			expectProblems(t, stdout, tc.Files...)
			expectContains(t, stdout, "arksave repair "+dir)

			code, stdout, stderr = arksave("repair", "--dry-run", dir)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "dry run: nothing was written")

			code, stdout, stderr = arksave("repair", dir)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "problems found", "kept:", "no problems found")
			for _, p := range tc.Lost {
				if !strings.Contains(stdout, fmt.Sprintf("%v", p)) && !strings.Contains(stdout, "left no trace to name them by") {
					t.Errorf("the loss of chunk %v is not reported:\n%s", p, stdout)
				}
			}

			code, stdout, stderr = arksave("check", dir)
			expectCode(t, 0, code, stderr+stdout)
			if s := loadsScore(t, dir); s != tc.Score {
				t.Errorf("the repaired save scores %d, want %d", s, tc.Score)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	dir := fresh(t)
	for _, args := range [][]string{
		{"check"}, {"check", dir, dir}, {"check", "--bogus", dir},
		{"repair"}, {"repair", dir, dir}, {"repair", "--chunk-size", "99999", dir},
		{"compact"}, {"restore", dir}, {"restore", "--generation", "x", dir},
		{"render", dir}, {"render", "-o", "x.png"}, {"render", "-o", "x.png", "--region", "1,2,3", dir},
		{"render", "-o", "x.png", "--region", "5,5,1,1", dir}, {"render", "-o", "x.png", "--scale", "2", "--zoom", "2", dir},
		{"migrate"}, {"export", dir}, {"inspect"},
	} {
		code, _, stderr := arksave(args...)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "usage: arksave "+args[0])
	}
	code, stdout, _ := arksave("render", "-h")
	expectCode(t, 0, code, "")
	expectContains(t, stdout, "usage: arksave render", "-region", "-grid", "-zoom")
}

func TestErrorsSayWhatToDo(t *testing.T) {
	empty := t.TempDir()
	code, _, stderr := arksave("check", filepath.Join(empty, "nope"))
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "is not a save: it does not exist")

	code, stdout, stderr := arksave("check", empty)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "not a save")
	expectNot(t, stdout+stderr, "problems found", "problem found")

	for _, cmd := range [][]string{{"repair"}, {"compact"}, {"render", "-o", filepath.Join(empty, "x.png")}, {"export", "--json"}, {"migrate"}} {
		code, _, stderr = arksave(append(cmd, empty)...)
		expectCode(t, 1, code, stderr)
		expectContains(t, stderr, "save")
	}

	dir := fresh(t)
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	for _, cmd := range []string{"compact", "migrate"} {
		code, _, stderr = arksave(cmd, dir)
		expectCode(t, 1, code, stderr)
		expectContains(t, stderr, "arksave repair")
	}
	must(t, os.Remove(filepath.Join(dir, "chunks.pxsw")))
	code, _, stderr = arksave("repair", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "--empty-chunks")
}

// No input panics the tool: every command on directories of random files
// named like a save's, and on damaged copies of a real save.
func TestNoPanicOnGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	out := filepath.Join(t.TempDir(), "x.png")
	commands := [][]string{{"inspect"}, {"inspect", "--json"}, {"check"}, {"export", "--json"}, {"render", "-o", out},
		{"repair", "--dry-run"}, {"repair"}, {"migrate"}, {"compact"}}
	real, err := os.ReadFile(filepath.Join(base, "chunks.pxsw"))
	must(t, err)
	for i := range 24 {
		dir := fresh(t)
		switch i % 3 {
		case 0: // random bytes in place of every file
			for _, f := range []string{"manifest", "world-3.pecs", "chunks.pxsw", "backups/manifest-2"} {
				buf := make([]byte, rng.IntN(400))
				for j := range buf {
					buf[j] = byte(rng.Uint32())
				}
				must(t, os.WriteFile(filepath.Join(dir, f), buf, 0o644))
			}
		case 1: // many flipped bytes in the store
			data := append([]byte(nil), real...)
			for range 20 {
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			}
			must(t, os.WriteFile(filepath.Join(dir, "chunks.pxsw"), data, 0o644))
		case 2: // the store cut anywhere, the manifest gone
			must(t, os.WriteFile(filepath.Join(dir, "chunks.pxsw"), real[:rng.IntN(len(real))], 0o644))
			must(t, os.Remove(filepath.Join(dir, "manifest")))
		}
		for _, cmd := range commands {
			code, _, stderr := arksave(append(cmd, dir)...)
			if code != 0 && code != 1 {
				t.Fatalf("%v on garbage %d: exit %d: %s", cmd, i, code, stderr)
			}
		}
		for _, f := range []string{"chunks.pxsw", "world-3.pecs"} {
			for _, cmd := range [][]string{{"inspect"}, {"check"}} {
				code, _, stderr := arksave(append(cmd, filepath.Join(dir, f))...)
				if code != 0 && code != 1 {
					t.Fatalf("%v %s on garbage %d: exit %d: %s", cmd, f, i, code, stderr)
				}
			}
		}
	}
}

// The committed save of manifest format 1 (savetool/testdata/v1-save):
// check notes the old format, migrate upgrades it, the game loads it.
func TestMigrateV1Save(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.CopyDir("../savetool/testdata/v1-save", dir))
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "no problems found", "format 1; arksave migrate")

	code, stdout, stderr = arksave("migrate", "--dry-run", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "generation 3: manifest format 1 would become 3", "chunk store chunks.pxsw: PXSW 1 would be written", "nothing was written")

	code, stdout, stderr = arksave("migrate", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "manifest format 1 -> 3: committed generation 4", "chunk store PXSW 1 -> 3", "backup manifests upgraded", "PXSW 3")

	code, stdout, stderr = arksave("check", dir)
	expectCode(t, 0, code, stderr)
	if strings.Contains(stdout, "migrate") {
		t.Errorf("check still suggests migrate:\n%s", stdout)
	}
	if s := loadsScore(t, dir); s != 3 {
		t.Errorf("the migrated save scores %d", s)
	}
}

func TestCheckJSONAndInspectOfDamage(t *testing.T) {
	dir := fresh(t)
	l, err := savetest.LayoutOf(dir)
	must(t, err)
	for _, d := range savetest.Damages {
		if d.Name == "flipped-full-record" || d.Name == "flipped-page-table" {
			must(t, d.Apply(dir, l))
		}
	}
	code, stdout, stderr := arksave("check", "--json", dir)
	expectCode(t, 1, code, stderr)
	var r struct {
		OK       bool
		Problems []struct {
			File   string
			Offset *int64
			Chunk  *[2]int32
			Error  string
		}
	}
	must(t, json.Unmarshal([]byte(stdout), &r))
	chunk := false
	for _, p := range r.Problems {
		if p.Chunk != nil && *p.Chunk == [2]int32{savetest.FullChunk.X, savetest.FullChunk.Y} && p.Offset != nil && p.File == savetest.DataFile1 {
			chunk = true
		}
	}
	if r.OK || !chunk {
		t.Errorf("check --json: %s", stdout)
	}
	code, _, stderr = arksave("inspect", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "is damaged", "arksave repair")
}

// arksave repair after the current chunk store (a compacted copy) was
// truncated: the chunks it lost are listed as reverted, taken from the
// backup whose store holds them, and read back as saved.
func TestRepairRevertsLostChunksFromBackup(t *testing.T) {
	dir := fresh(t)
	want, err := savetest.Read(dir)
	must(t, err)
	code, _, stderr := arksave("compact", "--whole", dir)
	expectCode(t, 0, code, stderr)
	data := filepath.Join(dir, "chunks-4-data-1.pxsd")
	fi, err := os.Stat(data)
	must(t, err)
	must(t, os.Truncate(data, fi.Size()/3))

	code, stdout, stderr := arksave("repair", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "reverted: chunk", "lost from chunks-4.pxsw", "backup 3's (in chunks.pxsw) version is used", "no problems found")
	got, err := savetest.Read(dir)
	must(t, err)
	for p, w := range want.Chunks {
		if !slices.Equal(got.Chunks[p], w) {
			t.Errorf("chunk %v reads differently after the repair", p)
		}
	}
}
