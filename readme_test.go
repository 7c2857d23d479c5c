package arksave_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/mlange-42/ark/ecs"
)

// readmeMaxLines is the README's budget: the front door, with the rest in docs/.
const readmeMaxLines = 250

// The documents whose relative links must resolve.
var docFiles = []string{"README.md", "docs/guide.md", "docs/cli.md", "docs/format.md", "docs/benchmarks.md", "demo/README.md"}

// fence is a fenced code block of a Markdown file.
type fence struct {
	info string // the word after the opening fence: go, sh, text, ...
	line int    // the line of the opening fence, from 1
	body string // the lines between the fences, each with its newline
}

// fences returns the fenced code blocks of a Markdown text, and the text
// with their lines blanked (so that links inside code are not taken for links).
func fences(text string) ([]fence, string) {
	var out []fence
	lines := strings.SplitAfter(text, "\n")
	var cur *fence
	var body strings.Builder
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fence{info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}
			body.Reset()
			lines[i] = "\n"
		case cur != nil && trimmed == "```":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
			lines[i] = "\n"
		case cur != nil:
			body.WriteString(l)
			lines[i] = "\n"
		}
	}
	return out, strings.Join(lines, "")
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	must(t, err)
	return string(b)
}

// The README's first snippet is Example with the generator it uses, as
// example_test.go holds them: it compiles and runs with go test.
func TestReadmeFirstSnippetIsExample(t *testing.T) {
	blocks, _ := fences(readDoc(t, "README.md"))
	var first *fence
	for i := range blocks {
		if blocks[i].info == "go" {
			first = &blocks[i]
			break
		}
	}
	expect(t, first != nil, "README.md has no Go snippet")

	text := readDoc(t, "example_test.go")
	start := strings.Index(text, "// hills is the game's chunk generator")
	end := strings.Index(text, "// Output: saved generation 1 error: <nil>\n}\n")
	expect(t, start >= 0 && end > start, "example_test.go lost the generator or Example")
	want := text[start : end+len("// Output: saved generation 1 error: <nil>\n}\n")]
	if first.body != want {
		t.Errorf("README.md's first snippet (line %d) differs from Example in example_test.go:\n--- README\n%s--- example_test.go\n%s", first.line, first.body, want)
	}
}

// Every Go snippet the README shows is code that go test compiles: it
// stands, byte for byte, in one of the root package's test files.
func TestReadmeGoSnippetsCompile(t *testing.T) {
	tests, err := filepath.Glob("*_test.go")
	must(t, err)
	var sources []string
	for _, name := range tests {
		sources = append(sources, readDoc(t, name))
	}
	blocks, _ := fences(readDoc(t, "README.md"))
	n := 0
	for _, b := range blocks {
		if b.info != "go" {
			continue
		}
		n++
		found := false
		for _, src := range sources {
			if strings.Contains(src, b.body) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md line %d: this Go snippet is in none of the root package's test files, so nothing compiles it; make it a copy of tested code (an Example):\n%s", b.line, b.body)
		}
	}
	expect(t, n > 0, "README.md has no Go snippet")
}

// The Go snippets of the docs are fragments of tested programs: each line
// of code in them (comments aside) is a line of a Go file of the repository,
// so that a renamed or removed name shows here.
func TestDocGoSnippetLinesExist(t *testing.T) {
	lines := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(src), "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		return nil
	})
	must(t, err)
	for _, doc := range docFiles {
		if doc == "README.md" {
			continue // TestReadmeGoSnippetsCompile holds it to whole snippets
		}
		blocks, _ := fences(readDoc(t, doc))
		for _, b := range blocks {
			if b.info != "go" {
				continue
			}
			for i, l := range strings.Split(b.body, "\n") {
				l = strings.TrimSpace(l)
				if l == "" || strings.HasPrefix(l, "//") || lines[l] {
					continue
				}
				t.Errorf("%s line %d: %q is in no Go file of the repository: the snippet no longer matches the code", doc, b.line+1+i, l)
			}
		}
	}
}

func TestReadmeLength(t *testing.T) {
	lines := strings.Count(readDoc(t, "README.md"), "\n")
	if lines > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference to docs/", lines, readmeMaxLines)
	}
}

var (
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// anchor is the fragment GitHub gives a heading: lower case, letters, digits,
// spaces, hyphens and underscores kept, spaces made hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the fragments of a Markdown text's headings (outside code).
func anchors(text string) map[string]bool {
	_, prose := fences(text)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range strings.Split(prose, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		a := anchor(strings.TrimSpace(strings.TrimLeft(l, "#")))
		if k := seen[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link in the README and the docs names a file or directory
// of the repository, and a fragment names a heading of the Markdown file it
// points into.
func TestDocLinksResolve(t *testing.T) {
	for _, doc := range docFiles {
		text := readDoc(t, doc)
		_, prose := fences(text)
		prose = inlineCode.ReplaceAllString(prose, "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := doc
			if path != "" {
				resolved = filepath.Join(filepath.Dir(doc), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %q: %s does not exist", doc, target, resolved)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			if !anchors(readDoc(t, resolved))[frag] {
				t.Errorf("%s: link %q: %s has no heading #%s", doc, target, resolved, frag)
			}
		}
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"JSON both ways: `export --json` and `import`": "json-both-ways-export---json-and-import",
		"A game's tests: the file-system seam":         "a-games-tests-the-file-system-seam",
		"The world codec on its own (`archetype`)":     "the-world-codec-on-its-own-archetype",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// jsonFormat is the "format" the world JSON export writes today.
func jsonFormat(t *testing.T) string {
	t.Helper()
	var file, js bytes.Buffer
	must(t, archetype.Encode(&file, ecs.NewWorld()))
	must(t, archetype.ExportJSON(&js, &file))
	var head struct {
		Format string `json:"format"`
	}
	must(t, json.Unmarshal(js.Bytes(), &head))
	expect(t, head.Format != "", "the world JSON names no format")
	return head.Format
}

// docs/format.md's table of versions is the one the code writes and reads.
func TestFormatDocVersions(t *testing.T) {
	doc := readDoc(t, "docs/format.md")
	format := jsonFormat(t)
	for _, row := range []string{
		fmt.Sprintf("| save directory manifest (JSON) | %d | %d to %d |", savedir.ManifestVersion, savedir.OldestManifestVersion, savedir.ManifestVersion),
		fmt.Sprintf("| PECS world file | %d.%d | %d.0 and %d.%d |", archetype.VersionMajor, archetype.VersionMinor, archetype.OldestVersionMajor, archetype.VersionMajor, archetype.VersionMinor),
		fmt.Sprintf("| PXSW chunk store | %d | %d to %d |", chunkstore.FormatVersion, chunkstore.OldestFormatVersion, chunkstore.FormatVersion),
		fmt.Sprintf("| world JSON (`arksave export --json`, `import`) | `%s` | `%s` |", format, format),
	} {
		expect(t, strings.Contains(doc, row), "docs/format.md lacks the row %q", row)
	}
}
