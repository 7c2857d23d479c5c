package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// copyStore copies the chunk store of 3 or 4 axes in the chunk store's
// test data (a store file and its two data files) to a temporary
// directory and returns the store file's path.
func copyStore(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"w.pxsw", "w-data-1.pxsd", "w-data-2.pxsd"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "chunkstore", "testdata", "v3", name, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "w.pxsw")
}

// inspect and check read chunk stores of 3 and 4 axes (format 3): their
// keys, their chunks and body blocks; damage in one is found as in any.
func TestInspectAndCheckStoreOfMoreAxes(t *testing.T) {
	for _, tc := range []struct{ name, axes string }{{"axes-3", "3 axes (x, y, z)"}, {"axes-4", "4 axes (x, y, z, w)"}} {
		path := copyStore(t, tc.name)
		code, stdout, stderr := arksave("inspect", path)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "keys", tc.axes, "5 stored: 2 full, 2 delta, 0 empty, 1 palette", "bodies      1 in 1 chunk")
		code, stdout, stderr = arksave("inspect", "--json", path)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, `"axes": `+tc.axes[:1])
		code, stdout, stderr = arksave("check", path)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "no problems found")

		data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "w-data-1.pxsd"))
		if err != nil {
			t.Fatal(err)
		}
		data[70] ^= 0x10 // inside the first record
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), "w-data-1.pxsd"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, _ = arksave("check", path)
		expectCode(t, 1, code, "")
		expectContains(t, stdout, "w-data-1.pxsd", "offset 64", "chunk (0, 20, ")
		code, stdout, _ = arksave("check", "--json", path)
		expectCode(t, 1, code, "")
		expectContains(t, stdout, `"key": [`)
	}
}
