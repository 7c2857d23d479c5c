package e2e_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The arksave command converts the demo's save to JSON and back: import gives the world file
// byte for byte, and an import into the save commits a generation the demo loads and goes on
// from.
func TestToolImportOnDemoSave(t *testing.T) {
	dir := copySave(t)
	js := filepath.Join(t.TempDir(), "save.json")
	must(t, os.WriteFile(js, []byte(runOK(t, "export", "--json", dir)), 0o644))

	out := filepath.Join(t.TempDir(), "world.pecs")
	stdout := runOK(t, "import", "--out", out, js)
	if !strings.Contains(stdout, "wrote "+out) {
		t.Fatalf("import --out says:\n%s", stdout)
	}
	want, err := os.ReadFile(worldFile(t, dir))
	must(t, err)
	got, err := os.ReadFile(out)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("the imported world file (%d bytes) differs from the demo's (%d bytes)", len(got), len(want))
	}

	gen := manifest(t, dir).Generation
	stdout = runOK(t, "import", "--into", dir, js)
	if m := manifest(t, dir); m.Generation != gen+1 || !strings.Contains(stdout, "is now a backup") {
		t.Fatalf("import --into committed generation %d after %d:\n%s", m.Generation, gen, stdout)
	}
	runOK(t, "check", dir)
	st := headless(t, "-ticks", "30", "-autosave", "0", "-load", "-chunk", "128", "-save", dir)
	if !st.Loaded || st.Problems != 0 || st.FailedSaves != 0 || st.StartTick == 0 {
		t.Fatalf("the demo does not go on from the imported save: %+v", st)
	}
}
