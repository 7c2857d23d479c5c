package savetool_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

const scoreKey = `"github.com/arksave/arksave/internal/testkit/savetest.Score": {"Points":3}`

// exportDir exports generation gen of a save directory as JSON.
func exportDir(t *testing.T, dir string, gen uint64) []byte {
	t.Helper()
	var js bytes.Buffer
	must(t, savetool.ExportJSON(&js, dir, gen, savetool.Options{}))
	return js.Bytes()
}

// A save directory's export and a world file's both import to the world file exported, byte for
// byte.
func TestImportJSON(t *testing.T) {
	world, err := os.ReadFile(filepath.Join(base, "world-3.pecs"))
	must(t, err)
	var out bytes.Buffer
	rep, err := savetool.ImportJSON(&out, bytes.NewReader(exportDir(t, base, 0)))
	must(t, err)
	expect(t, bytes.Equal(out.Bytes(), world), "directory export: %d bytes, the world file has %d", out.Len(), len(world))
	expect(t, rep.From == 3 && rep.Entities == 2 && rep.Bytes == len(world) && rep.Generation == 0, "report %+v", rep)

	var js bytes.Buffer
	must(t, archetype.ExportJSON(&js, bytes.NewReader(world)))
	out.Reset()
	rep, err = savetool.ImportJSON(&out, &js)
	must(t, err)
	expect(t, bytes.Equal(out.Bytes(), world) && rep.From == 0, "world file export: %d bytes, report %+v", out.Len(), rep)

	// Bad JSON inside a directory's export names its path inside "world".
	bad := bytes.Replace(exportDir(t, base, 0), []byte(`"Points":3`), []byte(`"Points":"three"`), 1)
	_, err = savetool.ImportJSON(&out, bytes.NewReader(bad))
	expect(t, errors.Is(err, archetype.ErrBadJSON) && strings.Contains(err.Error(), `in "world"`) &&
		strings.Contains(err.Error(), `resources["github.com/arksave/arksave/internal/testkit/savetest.Score"].Points`), "%v", err)
	_, err = savetool.ImportJSON(&out, strings.NewReader(`{"generation": 3, "chunks": {}}`))
	expect(t, errors.Is(err, archetype.ErrBadJSON), "no world: %v", err)
}

// Importing into a save directory commits the world as a new generation with the committed
// chunks, through the commit protocol: the game loads it, edits included, the save checks clean
// and the generation before is a backup.
func TestImportInto(t *testing.T) {
	dir := fresh(t)
	js := exportDir(t, dir, 0)
	expect(t, bytes.Contains(js, []byte(scoreKey)), "export lacks %s", scoreKey)
	edited := bytes.Replace(js, []byte(scoreKey), []byte(strings.Replace(scoreKey, "3", "99", 1)), 1)
	before, err := savetest.Read(dir)
	must(t, err)

	rep, err := savetool.ImportInto(dir, bytes.NewReader(edited), savetool.ImportOptions{})
	must(t, err)
	expect(t, rep.From == 3 && rep.Previous == 3 && rep.Generation == 4, "report %+v", rep)
	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "after the import: %v", r.Problems)
	expect(t, loads(t, dir) == 99, "the game does not load the imported score")
	after, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(after, before) == "", "chunks changed: %s", savetest.Diff(after, before))
	info, err := savetool.InspectDir(dir, savetool.Options{})
	must(t, err)
	gens := []uint64{}
	for _, g := range info.Generations {
		gens = append(gens, g.Generation)
	}
	expect(t, len(gens) == 4 && gens[0] == 4 && gens[1] == 3, "generations %v", gens)
}

// An export of another generation than the committed one is refused unless asked for; a
// directory a game holds is refused naming the game.
func TestImportIntoRefuses(t *testing.T) {
	dir := fresh(t)
	old := exportDir(t, dir, 1)
	_, err := savetool.ImportInto(dir, bytes.NewReader(old), savetool.ImportOptions{})
	expect(t, errors.Is(err, savetool.ErrOtherGeneration) && strings.Contains(err.Error(), "generation 1"), "%v", err)
	rep, err := savetool.ImportInto(dir, bytes.NewReader(old), savetool.ImportOptions{AnyGeneration: true})
	must(t, err)
	expect(t, rep.From == 1 && rep.Generation == 4, "report %+v", rep)
	loads(t, dir)

	// The same generation number of another save (created at another time).
	cur := exportDir(t, dir, 0)
	other := regexp.MustCompile(`"created_ms": \d+`).ReplaceAll(cur, []byte(`"created_ms": 1000`))
	expect(t, !bytes.Equal(other, cur), "no created_ms in the export")
	_, err = savetool.ImportInto(dir, bytes.NewReader(other), savetool.ImportOptions{})
	expect(t, errors.Is(err, savetool.ErrOtherGeneration) && strings.Contains(err.Error(), "created at 1970-01-01T00:00:01Z"), "%v", err)

	g, err := savetest.Open(dir, true)
	must(t, err)
	_, err = savetool.ImportInto(dir, bytes.NewReader(cur), savetool.ImportOptions{})
	must(t, g.Close())
	expect(t, errors.Is(err, savetool.ErrInUse), "while the game runs: %v", err)

	_, err = savetool.ImportInto(t.TempDir(), bytes.NewReader(old), savetool.ImportOptions{AnyGeneration: true})
	expect(t, err != nil, "imported into an empty directory")
}
