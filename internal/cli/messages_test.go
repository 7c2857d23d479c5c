package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/vfs"
)

// inspect counts pixel bodies in the chunks that hold them: a store whose
// chunks hold regional entities but no body says "none", not "0 in 3
// chunks", and one with bodies counts the chunks that hold bodies only.
func TestInspectBodiesCount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g, err := savetest.OpenRegional(nil, dir, savetest.ChunkSize, savetest.Generator)
	must(t, err)
	g.Crate(1, 10, 12, "rope", g.Beacon(2, -20, 20))
	g.Crate(3, 40, 5, "lamp", g.Beacon(4, 5, 40))
	must(t, g.Save())
	code, stdout, stderr := arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "entities")
	if m := regexp.MustCompile(`(?m)^\s*bodies\s+(.*)$`).FindStringSubmatch(stdout); m == nil || m[1] != "none" {
		t.Errorf("a store of regional entities without bodies: bodies line %q:\n%s", m, stdout)
	}

	g.Body(20, 40)
	must(t, g.Save())
	must(t, g.Close())
	code, stdout, stderr = arksave("inspect", dir)
	expectCode(t, 0, code, stderr)
	if m := regexp.MustCompile(`(?m)^\s*bodies\s+(.*)$`).FindStringSubmatch(stdout); m == nil || m[1] != "1 in 1 chunk" {
		t.Errorf("one body among regional entities: bodies line %q:\n%s", m, stdout)
	}
}

// denyingLocation registers a location scheme that opens dir through a
// file system refusing, for want of permission, every read of the file
// named denied: a save on a disk the user may not read, which a
// test running as root cannot make with chmod.
func denyingLocation(t *testing.T, scheme, dir, denied string) string {
	t.Helper()
	vfs.Register(scheme, func(string) (vfs.FS, string, io.Closer, error) {
		return vfs.Faulty(vfs.OS, vfs.InjectorFunc(func(op vfs.Op, name string) error {
				if filepath.Base(name) == denied && (op == vfs.OpOpen || op == vfs.OpOpenRW || op == vfs.OpReadDir) {
					return &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
				}
				return nil
			})),

			dir, nil, nil
	})
	return scheme + "://save"
}

// A file of a save the user may not read is a permission problem on that
// path, not damage: copy, inspect, check and export say so and name
// neither arksave repair nor damage.
func TestPermissionIsNotDamage(t *testing.T) {
	for i, file := range []string{"manifest", "world-3.pecs", "chunks.pxsw", "chunks-data-1.pxsd"} {
		dir := fresh(t)
		loc := denyingLocation(t, fmt.Sprintf("denied%d", i), dir, file)
		denied := filepath.Join(dir, file)
		for _, args := range [][]string{
			{"copy", loc, filepath.Join(t.TempDir(), "copy")},
			{"inspect", loc},
			{"check", loc},
			{"export", "--json", loc},
		} {
			code, stdout, stderr := arksave(args...)
			out := stdout + stderr
			if code != 1 || !strings.Contains(out, "permission problem on "+denied) || !strings.Contains(out, "not damage") {
				t.Errorf("%s unreadable: arksave %s: exit status %d, want 1 and a permission problem on it:\n%s", file, args[0], code, out)
			}
			for _, wrong := range []string{"arksave repair", "is damaged", "DAMAGED", "lists the damage"} {
				if strings.Contains(out, wrong) {
					t.Errorf("%s unreadable: arksave %s says %q:\n%s", file, args[0], wrong, out)
				}
			}
		}
	}
}

// export of a directory that holds no save, or of a generation the save
// does not have, says so (listing the generations there are), and neither
// that the JSON is incomplete nor that anything is damaged.
func TestExportNoSaveNoGeneration(t *testing.T) {
	dir := fresh(t)
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"export", "--json", empty}, []string{empty + " is not a save", "holds no manifest"}},
		{[]string{"export", "--json", filepath.Join(empty, "nothing")}, []string{"nothing is not a save", "does not exist"}},
		{[]string{"export", "--json", "--generation", "7", dir}, []string{"holds no generation 7", "3 (committed), 2, 1"}},
	} {
		code, stdout, stderr := arksave(c.args...)
		expectCode(t, 1, code, stderr)
		expectContains(t, stderr, c.want...)
		if stdout != "" {
			t.Errorf("%v: wrote %q", c.args, stdout)
		}
		for _, wrong := range []string{"incomplete", "damage", "repair"} {
			if strings.Contains(stderr, wrong) {
				t.Errorf("%v says %q:\n%s", c.args, wrong, stderr)
			}
		}
	}
	err := savetool.ExportJSON(io.Discard, dir, 7, savetool.Options{})
	if !errors.Is(err, autosave.ErrNoGeneration) {
		t.Errorf("ExportJSON of a generation the save lacks: %v, want ErrNoGeneration", err)
	}
}

// export takes a save directory or a world file: a bare chunk store is
// refused as not a save, naming the directory to give instead, not
// reported as a damaged world file.
func TestExportBareChunkStore(t *testing.T) {
	dir := fresh(t)
	code, stdout, stderr := arksave("export", "--json", filepath.Join(dir, "chunks.pxsw"))
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "chunks.pxsw is not a save", "chunk store", "arksave export --json "+dir)
	for _, wrong := range []string{"damaged", "restore it from a backup", "incomplete"} {
		if strings.Contains(stderr, wrong) {
			t.Errorf("a bare chunk store is called %q:\n%s", wrong, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("wrote %q", stdout)
	}
	// The directory it names exports.
	code, _, stderr = arksave("export", "--json", dir)
	expectCode(t, 0, code, stderr)
}

// serve starts on a save whose current data file was cut short, and says
// on its way in that the store is damaged, naming arksave repair.
func TestServeTruncatedDataFile(t *testing.T) {
	dir := fresh(t)
	data := filepath.Join(dir, "chunks-data-1.pxsd")
	st, err := os.Stat(data)
	must(t, err)
	must(t, os.Truncate(data, st.Size()/2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := startServe(t, ctx, dir, 2)
	expectContains(t, lines[0], "serving the map of "+dir+" (generation 3)")
	expectContains(t, lines[1], "warning: ", "is damaged", "arksave repair "+dir)
	cancel()
	must(t, <-done)
}

// A backups/ the user may not list is no reason to copy a save without its
// backups: copy fails naming the permission problem, and check lists it.
func TestCopyUnreadableBackups(t *testing.T) {
	dir := fresh(t)
	loc := denyingLocation(t, "deniedbackups", dir, "backups")
	dst := filepath.Join(t.TempDir(), "copy")
	code, stdout, stderr := arksave("copy", loc, dst)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "backups cannot be read", "permission problem on "+filepath.Join(dir, "backups"))
	if stdout != "" {
		t.Errorf("copy says %q", stdout)
	}
	if _, err := os.Stat(filepath.Join(dst, "manifest")); err == nil {
		t.Errorf("a copy without the backups was committed in %s", dst)
	}
	code, stdout, _ = arksave("check", loc)
	expectCode(t, 1, code, stdout)
	expectContains(t, stdout, "backups: autosave: list backups", "permission problem on "+filepath.Join(dir, "backups"))
}
