package arksave_test

import (
	"os"
	"strings"
	"testing"
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
