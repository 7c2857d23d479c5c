package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
)

// pkg prefixes the full names of the test's types.
const pkg = "github.com/arksave/arksave/internal/cli."

type (
	Position struct{ X, Y float64 }
	Name     struct{ S string }
	ChildOf  struct{ ecs.RelationMarker }
	Clock    struct{ Tick int64 }
)

// writeWorld saves a small world to a file in a temporary directory and returns its path.
func writeWorld(t *testing.T, opts ...archetype.Option) string {
	t.Helper()
	w := ecs.NewWorld()
	ecs.AddResource(w, &Clock{Tick: 77})
	parent := ecs.NewMap2[Position, Name](w).NewEntity(&Position{1, 2}, &Name{"parent"})
	ecs.NewMap2[Position, ChildOf](w).NewEntity(&Position{3, 4}, &ChildOf{}, ecs.Rel[ChildOf](parent))
	w.RemoveEntity(w.NewEntity())
	var buf bytes.Buffer
	opts = append([]archetype.Option{archetype.Timestamp(time.UnixMilli(1_700_000_000_000))}, opts...)
	if err := archetype.Encode(&buf, w, opts...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "world.pecs")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// damage flips a byte in the middle of a file.
func damage(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func arksave(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func expectCode(t *testing.T, want, got int, stderr string) {
	t.Helper()
	if want != got {
		t.Fatalf("exit status %d, want %d; stderr:\n%s", got, want, stderr)
	}
}

func expectContains(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("output lacks %q:\n%s", p, text)
		}
	}
}

func TestUsage(t *testing.T) {
	code, _, stderr := arksave()
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, "usage: arksave <command>", "inspect", "export")

	code, stdout, _ := arksave("help")
	expectCode(t, 0, code, "")
	expectContains(t, stdout, "usage: arksave")

	code, _, stderr = arksave("frobnicate")
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, `unknown command "frobnicate"`)

	for _, args := range [][]string{
		{"inspect"}, {"inspect", "a", "b"}, {"inspect", "--bogus", "x.pecs"},
		{"export", "x.pecs"}, {"export", "--json"},
	} {
		code, _, stderr = arksave(args...)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "usage: arksave "+args[0])
	}
}

func TestInspect(t *testing.T) {
	path := writeWorld(t, archetype.LZ4())
	code, stdout, stderr := arksave("inspect", path)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout,
		"PECS 2.0, flags: lz4", "2023-11-14T22:13:20Z", "2 alive", "1 free slots",
		"arksave/internal/cli.Position", "raw", "{X float64 @0, Y float64 @8}", "arksave/internal/cli.Name", "msgpack",
		"cli.ChildOf -> [2,0]", "arksave/internal/cli.Clock", "checksum    CRC32C", ": ok")
}

func TestInspectJSON(t *testing.T) {
	path := writeWorld(t)
	code, stdout, stderr := arksave("inspect", path, "--json") // flags may follow the file
	expectCode(t, 0, code, stderr)
	var got struct {
		Header struct{ Entities uint64 }
		Types  []struct {
			Name     string
			Encoding string
		}
		Tables []struct {
			Entities  uint32
			Relations map[string][2]uint32
		}
		Checksum struct{ OK bool }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if got.Header.Entities != 2 || len(got.Tables) != 2 || !got.Checksum.OK || len(got.Types) != 4 {
		t.Errorf("unexpected inspect JSON:\n%s", stdout)
	}
}

func TestInspectDamaged(t *testing.T) {
	path := writeWorld(t)
	damage(t, path)
	code, stdout, stderr := arksave("inspect", path)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "FAILED")
	expectContains(t, stderr, "is damaged", "restore it from a backup")

	code, stdout, _ = arksave("inspect", "--json", path)
	expectCode(t, 1, code, "")
	expectContains(t, stdout, `"ok": false`, `"error"`)
}

func TestInspectMissingFile(t *testing.T) {
	code, _, stderr := arksave("inspect", filepath.Join(t.TempDir(), "nope.pecs"))
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "nope.pecs is not a save: it does not exist")
}

func TestExportJSON(t *testing.T) {
	path := writeWorld(t, archetype.LZ4())
	code, stdout, stderr := arksave("export", "--json", path)
	expectCode(t, 0, code, stderr)
	var got struct {
		Tables []struct {
			Components []string
			Entities   []map[string]any
		}
		Resources map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	first := got.Tables[0].Entities[0]
	if first[pkg+"Name"].(map[string]any)["S"] != "parent" {
		t.Errorf("Name not exported: %v", first)
	}
	if first[pkg+"Position"].(map[string]any)["Y"] != 2.0 {
		t.Errorf("Position not exported: %v", first)
	}
	if got.Resources[pkg+"Clock"]["Tick"] != 77.0 {
		t.Errorf("resource not exported: %v", got.Resources)
	}
}

func TestExportDamaged(t *testing.T) {
	path := writeWorld(t)
	damage(t, path)
	code, stdout, stderr := arksave("export", "--json", path)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "is damaged")
	// "incomplete" only of JSON that was written.
	if (stdout != "") != strings.Contains(stderr, "incomplete") {
		t.Errorf("%d bytes of JSON written; stderr:\n%s", len(stdout), stderr)
	}
}

func TestInspectDirectoryAndFutureVersion(t *testing.T) {
	code, _, stderr := arksave("inspect", t.TempDir())
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "is not a save: the directory holds no manifest")

	path := writeWorld(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[4] = 9 // major version
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = arksave("inspect", path)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "newer arksave")
}

func expectNot(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if strings.Contains(text, p) {
			t.Errorf("output holds %q:\n%s", p, text)
		}
	}
}
