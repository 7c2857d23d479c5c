package jetstream_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/cli"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func expectRun(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out, errOut := runCLI(args...)
	expect(t, code == want, "arksave %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	return out
}

// arksave copy moves a save from a directory into JetStream and back,
// byte for byte; check, inspect, render and export read the world in
// JetStream as they read a directory.
func TestCopyAndToolsOnJetStream(t *testing.T) {
	s := startServer(t)
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.Build(dir))
	loc := "nats://" + s.Addr().String() + "/copied"

	out := expectRun(t, 0, "copy", "-q", dir, loc)
	expect(t, strings.Contains(out, "copied generation 3 and 2 backups"), "copy: %s", out)
	code, _, errOut := runCLI("copy", "-q", dir, loc)
	expect(t, code == 1 && strings.Contains(errOut, "already holds a save"), "a second copy over the first: %d %s", code, errOut)
	out = expectRun(t, 0, "check", "-q", loc)
	expect(t, strings.Contains(out, "no problems found") && strings.Contains(out, "generation 3 and 2 backups"), "check: %s", out)
	out = expectRun(t, 0, "inspect", loc)
	expect(t, strings.Contains(out, "generation") && strings.Contains(out, "chunks.pxsw"), "inspect: %s", out)
	png := filepath.Join(t.TempDir(), "map.png")
	expectRun(t, 0, "render", "-o", png, loc)
	data, err := os.ReadFile(png)
	must(t, err)
	expect(t, bytes.HasPrefix(data, []byte("\x89PNG")), "render wrote no PNG")
	out = expectRun(t, 0, "export", "--json", loc)
	expect(t, json.Valid([]byte(out)), "export wrote no JSON")
	wantJSON := expectRun(t, 0, "export", "--json", dir)
	expect(t, out == wantJSON, "the export of the copy differs from the original's")

	back := filepath.Join(t.TempDir(), "back")
	expectRun(t, 0, "copy", "-q", loc, back)
	want, err := savetest.Read(dir)
	must(t, err)
	got, err := savetest.Read(back)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "the save copied there and back differs: %s", savetest.Diff(got, want))
	expectRun(t, 0, "check", "-q", back)

	// The game continues the copy in JetStream.
	g, err := savetest.Open(loc, true)
	must(t, err)
	must(t, g.Save())
	must(t, g.Close())
	out = expectRun(t, 0, "check", "-q", loc)
	expect(t, strings.Contains(out, "generation 4"), "check after the game saved: %s", out)
}
