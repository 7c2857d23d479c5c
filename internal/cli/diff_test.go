package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// diff of the test save lists what its build changed between the
// generations, counted, then kind by kind; --json gives the library's
// report as it is.
func TestDiffCommand(t *testing.T) {
	code, stdout, stderr := arksave("diff", base, "1", "current")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout,
		"generation 1 -> generation 3 of "+base+": 4 chunks, 1 body, 1 world entity, 2 resources (3 store entries shared, not read)\n",
		"\nchunks (4):\n",
		"  (-1, -1)             added    full, pixels not counted (that needs the game's generator)\n",
		"  (0, 0)               changed  delta -> delta, 1 pixel\n",
		"  (0, 1)               added    delta, 30 pixels\n",
		"  (1, 1)               added    delta, 12 pixels\n",
		"\nbodies (1):\n  4294967298           added    in (-1, 1)\n",
		"\nworld entities (1):\n  [29, 0]              added\n",
		"\nresources (2):\n  github.com/arksave/arksave/components.BodyIDs changed\n",
	)
	expectNot(t, stdout, "players", "regional", "damaged", "... and")

	code, stdout, stderr = arksave("diff", "--json", base, "1", "3")
	expectCode(t, 0, code, stderr)
	var got savetool.DiffReport
	must(t, json.Unmarshal([]byte(stdout), &got))
	want, err := savetool.Diff(base, 1, 3, savetool.Options{})
	must(t, err)
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("diff --json gives\n%+v\nthe library\n%+v", got, *want)
	}

	code, stdout, stderr = arksave("diff", base, "current", "3")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "generation 3 -> generation 3 of "+base+": nothing differs (8 store entries shared, not read)\n")
}

// Mistakes in the command line are usage errors; a generation the save
// does not keep is an error naming the kept ones; a path that is not a
// save says so once.
func TestDiffBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{base, "1"}, {base}, {base, "1", "2", "3"}, {base, "one", "2"}, {base, "1", "-2"}, {base, "0", "2"}, {base, "1", "latest"}, {"--frobnicate", base, "1", "2"},
	} {
		code, stdout, stderr := arksave(append([]string{"diff"}, args...)...)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "usage: arksave diff [--json] [--all] [--key-file FILE] DIR A B")
		expectNot(t, stdout, "generation")
	}
	code, _, stderr := arksave("diff", base, "1", "2", "3x")
	expectCode(t, 2, code, stderr)
	code, _, stderr = arksave("diff", base, "one", "2")
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, `generation "one": give a generation number (arksave inspect `+base+` lists the kept ones) or current`)

	code, stdout, stderr := arksave("diff", base, "1", "9")
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "no generation 9", "3 (committed), 2, 1")
	expectNot(t, stdout, "differs")

	empty := filepath.Join(t.TempDir(), "empty")
	must(t, os.Mkdir(empty, 0o755))
	code, stdout, stderr = arksave("diff", empty, "1", "2")
	expectCode(t, 1, code, stderr)
	if n := strings.Count(stdout+stderr, "not a save"); n != 1 {
		t.Errorf("want one 'not a save', got %d:\n%s", n, stdout+stderr)
	}
	entries, err := os.ReadDir(empty)
	must(t, err)
	expect(t, len(entries) == 0, "diff wrote into a directory that is not a save: %v", entries)
}

// While the game holds the save, diff works and changes no file; its
// lists are cut at 20 items unless --all.
func TestDiffWhileTheGameHoldsTheSaveAndLongLists(t *testing.T) {
	dir := fresh(t)
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())
	for y := int32(-2); y <= 2; y++ {
		for x := int32(-2); x <= 2; x++ {
			must(t, g.Paint(x, y, 7, 7, components.MakePixel(9, 9, 9, 0)))
		}
	}
	must(t, g.Save())
	before := files(t, dir)

	code, stdout, stderr := arksave("diff", dir, "3", "current")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "generation 3 -> generation 4 of "+dir+": 25 chunks", "\nchunks (25):\n", "  ... and 5 more (--all lists them)\n")
	expect(t, strings.Count(stdout, "\n  (") == 20, "not 20 chunks listed:\n%s", stdout)

	code, stdout, stderr = arksave("diff", "--all", dir, "3", "4")
	expectCode(t, 0, code, stderr)
	expect(t, strings.Count(stdout, "\n  (") == 25, "not every chunk listed with --all:\n%s", stdout)
	expectNot(t, stdout, "... and")
	for y := int32(-2); y <= 2; y++ {
		for x := int32(-2); x <= 2; x++ {
			expectContains(t, stdout, fmt.Sprintf("\n  %-20s ", fmt.Sprintf("(%d, %d)", x, y)))
		}
	}

	after := files(t, dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed by diff", name)
		}
	}
	expect(t, len(after) == len(before), "diff made files: %d before, %d after", len(before), len(after))
}

// A damaged record is listed as damaged, not as a change, and diff exits
// 1 naming check and repair.
func TestDiffDamagedRecord(t *testing.T) {
	dir := fresh(t)
	l, err := savetest.LayoutOf(dir)
	must(t, err)
	h, err := l.Record(savetest.DeltaChunk, chunkstore.Delta)
	must(t, err)
	must(t, l.Flip(h.Offset+int64(h.Length)/2))
	code, stdout, stderr := arksave("diff", dir, "2", "3")
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "1 chunk, 1 resource, 1 damaged item", "\ndamaged (1):\n  generation 3: chunk (1, 1): chunkstore: checksum mismatch")
	expectNot(t, stdout, "(1, 1)               added")
	expectContains(t, stderr, "arksave diff: 1 damaged item not compared: arksave check "+dir+" lists the damage, arksave repair "+dir+" mends it")

	code, stdout, stderr = arksave("diff", "--json", dir, "2", "3")
	expectCode(t, 1, code, stderr)
	var got savetool.DiffReport
	must(t, json.Unmarshal([]byte(stdout), &got))
	expect(t, len(got.Damaged) == 1 && got.Damaged[0].What == "chunk (1, 1)", "damaged %+v", got.Damaged)
}

var expect = testkit.Expect
