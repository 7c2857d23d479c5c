package cli

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/arksave/arksave/internal/savetest"
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
