package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

func TestVersion(t *testing.T) {
	code, stdout, stderr := arksave("version")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "arksave ", "github.com/arksave/arksave", "go1.",
		"save directory manifest", "writes 3", "reads 1 to 3",
		"PECS world file", "writes 2.0 (entity sections 2.1)", "reads 1.0 to 2.1",
		"PXSW chunk store", "writes 3", "reads 1 to 3")
	code, stdout, stderr = arksave("--version")
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "PXSW chunk store")

	code, stdout, stderr = arksave("version", "--json")
	expectCode(t, 0, code, stderr)
	var v versionJSON
	must(t, json.Unmarshal([]byte(stdout), &v))
	if v.Module != "github.com/arksave/arksave" || v.Version == "" || len(v.Formats) != 3 {
		t.Fatalf("version --json: %+v", v)
	}
	code, _, stderr = arksave("version", "extra")
	expectCode(t, 2, code, stderr)
}

// arksave help <command> is that command's help, as <command> -h.
func TestHelpOfACommand(t *testing.T) {
	for name := range commands {
		code, help, stderr := arksave("help", name)
		expectCode(t, 0, code, stderr)
		code, dashH, stderr := arksave(name, "-h")
		expectCode(t, 0, code, stderr)
		if help != dashH {
			t.Errorf("help %s differs from %s -h:\n%s\n---\n%s", name, name, help, dashH)
		}
		expectContains(t, help, "usage: arksave "+name+" "+commands[name].args, commands[name].summary)
	}
	code, stdout, _ := arksave("help")
	expectCode(t, 0, code, "")
	expectContains(t, stdout, "usage: arksave <command>", "arksave help <command>", "version")

	code, stdout, stderr := arksave("help", "chekc")
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, `unknown command "chekc"`, "did you mean check?")
	if stdout != "" {
		t.Errorf("help of an unknown command printed on stdout: %s", stdout)
	}
}

// A mistyped command suggests the nearest ones, briefly.
func TestTypoSuggestsTheNearestCommand(t *testing.T) {
	for typo, want := range map[string]string{
		"chekc": "did you mean check?", "inpsect": "did you mean inspect?", "reapir": "did you mean repair?",
		"rendr": "did you mean render?", "compat": "did you mean compact?", "vesion": "did you mean version?",
		"exp": "did you mean export?",
	} {
		code, stdout, stderr := arksave(typo, t.TempDir())
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, `unknown command "`+typo+`"`, want, "arksave help")
		expectNot(t, stderr, "commands:") // no full usage dump
		if stdout != "" {
			t.Errorf("%s: stdout %q", typo, stdout)
		}
	}
	code, _, stderr := arksave("frobnicate")
	expectCode(t, 2, code, stderr)
	expectNot(t, stderr, "did you mean")
}

// Every flag a command's help lists is spelled as in its synopsis (one
// dash for one letter, two for longer names) and is accepted so spelled.
func TestFlagSyntaxInHelpMatchesWhatIsAccepted(t *testing.T) {
	for name, c := range commands {
		if c.flags == nil {
			continue
		}
		_, help, _ := arksave("help", name)
		c.flags().VisitAll(func(f *flag.Flag) {
			spelled := flagName(f.Name)
			other := "-" + f.Name
			if len(f.Name) == 1 {
				other = "--" + f.Name
			}
			if !strings.Contains(help, "\n  "+spelled) {
				t.Errorf("%s: help does not list %s:\n%s", name, spelled, help)
			}
			for _, word := range strings.FieldsFunc(c.args, func(r rune) bool { return strings.ContainsRune(" []|", r) }) {
				if word == other {
					t.Errorf("%s: the synopsis spells %s as %s", name, spelled, word)
				}
			}
			if strings.Contains(help, "\n  "+other+" ") || strings.Contains(help, "\n  "+other+"\n") {
				t.Errorf("%s: help spells %s as %s", name, spelled, other)
			}
			if vname, _ := flag.UnquoteUsage(f); vname != "" && !strings.Contains(c.args, spelled+" "+vname) {
				t.Errorf("%s: the synopsis %q lacks %s %s, as the help writes it", name, c.args, spelled, vname)
			}
			args := []string{spelled}
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				args = append(args, f.DefValue)
			}
			if _, err := parseFlags(c.flags(), append(args, "x")); err != nil {
				t.Errorf("%s: %v not accepted: %v", name, args, err)
			}
		})
	}
}

// A path that is not a save says so, once, in every command, without the
// library's inner steps.
func TestNotASaveSaysSoOnce(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	must(t, os.Mkdir(empty, 0o755))
	missing := filepath.Join(tmp, "nope")
	notes := filepath.Join(tmp, "notes.txt")
	must(t, os.WriteFile(notes, []byte("a shopping list, not a save\n"), 0o644))
	garbage := filepath.Join(tmp, "world.pecs")
	must(t, os.WriteFile(garbage, []byte("not a world file either, though named like one"), 0o644))

	for _, args := range [][]string{
		{"check", empty}, {"inspect", empty}, {"repair", empty}, {"repair", "--dry-run", empty}, {"compact", empty},
		{"migrate", empty}, {"restore", "--generation", "1", empty}, {"export", "--json", empty},
		{"render", "-o", filepath.Join(tmp, "x.png"), empty},
		{"check", missing}, {"repair", missing}, {"inspect", missing}, {"compact", missing},
		{"repair", notes}, {"check", notes}, {"inspect", notes},
	} {
		code, stdout, stderr := arksave(args...)
		expectCode(t, 1, code, stderr)
		out := stdout + stderr
		if n := strings.Count(out, "not a save"); n != 1 {
			t.Errorf("%v: want one 'not a save', got %d:\n%s", args, n, out)
		}
		expectNot(t, out, "problems found", "problem found", "autosave:", "open save directory", "damaged",
			"restore it from a backup", "arksave check tells")
		if strings.Count(stderr, "arksave "+args[0]+":") != 1 {
			t.Errorf("%v: the message is not one line of arksave %s:\n%s", args, args[0], stderr)
		}
	}
	// A file named .pecs that is no world file: the tool says what it is not.
	code, stdout, stderr := arksave("inspect", garbage)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "does not start with PECS")
	expectNot(t, stdout+stderr, "restore it from a backup")
	// The directory stays as it was: nothing created in it, no lock file.
	entries, err := os.ReadDir(empty)
	must(t, err)
	if len(entries) != 0 {
		t.Errorf("a command wrote into a directory that is not a save: %v", entries)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a command created %s", missing)
	}
}

// Messages name each package once and count in the right number.
func TestMessagesNameEachLayerOnce(t *testing.T) {
	dir := fresh(t)
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "\n1 problem found (")
	expectNot(t, stdout, "1 problems", "1 backups", "1 world files")

	dir = fresh(t)
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	st, err := os.Stat(filepath.Join(dir, savetest.DataFile1))
	must(t, err)
	must(t, savetest.Flip(filepath.Join(dir, savetest.DataFile1), st.Size()-100))
	code, stdout, stderr = arksave("check", dir)
	expectCode(t, 1, code, stderr)
	expectContains(t, stdout, "problems found (")
	for _, line := range strings.Split(stdout+stderr, "\n") {
		for _, pkg := range []string{"chunkstore:", "autosave:", "archetype:", "savetool:"} {
			if strings.Count(line, pkg) > 1 {
				t.Errorf("%q is repeated in %q", pkg, line)
			}
		}
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "world-3.pecs:") && strings.Count(line, "world-3.pecs") > 1 {
			t.Errorf("the file is named twice in %q", line)
		}
	}
	code, stdout, stderr = arksave("repair", dir)
	expectCode(t, 0, code, stderr)
	for _, line := range strings.Split(stdout+stderr, "\n") {
		if strings.Count(line, "chunkstore:") > 1 || strings.Count(line, "autosave:") > 1 {
			t.Errorf("a package is repeated in %q", line)
		}
	}
}
