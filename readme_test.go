package arksave_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
)

// The README's first snippet is Example with the generator it uses, as
// example_test.go holds them: it compiles and runs with go test.
func TestReadmeFirstSnippetIsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	must(t, err)
	_, block, ok := strings.Cut(string(readme), "```go\n")
	expect(t, ok, "README.md has no Go snippet")
	block, _, ok = strings.Cut(block, "```")
	expect(t, ok, "README.md's first Go snippet does not end")

	src, err := os.ReadFile("example_test.go")
	must(t, err)
	text := string(src)
	start := strings.Index(text, "// hills is the game's chunk generator")
	end := strings.Index(text, "// Output: saved generation 1 error: <nil>\n}\n")
	expect(t, start >= 0 && end > start, "example_test.go lost the generator or Example")
	want := text[start : end+len("// Output: saved generation 1 error: <nil>\n}\n")]
	if block != want {
		t.Errorf("README.md's first snippet differs from Example in example_test.go:\n--- README\n%s--- example_test.go\n%s", block, want)
	}
}

// docs/format.md's table of versions is the one the code writes and reads.
func TestFormatDocVersions(t *testing.T) {
	doc, err := os.ReadFile("docs/format.md")
	must(t, err)
	for _, row := range []string{
		fmt.Sprintf("| save directory manifest (JSON) | %d | %d to %d |", savedir.ManifestVersion, savedir.OldestManifestVersion, savedir.ManifestVersion),
		fmt.Sprintf("| PECS world file | %d.%d | %d.0 and %d.%d |", archetype.VersionMajor, archetype.VersionMinor, archetype.OldestVersionMajor, archetype.VersionMajor, archetype.VersionMinor),
		fmt.Sprintf("| PXSW chunk store | %d | %d to %d |", chunkstore.FormatVersion, chunkstore.OldestFormatVersion, chunkstore.FormatVersion),
	} {
		expect(t, strings.Contains(string(doc), row), "docs/format.md lacks the row %q", row)
	}
}
