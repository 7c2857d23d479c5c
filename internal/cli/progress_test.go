package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/savetool"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	if newBar(&buf, false) != nil {
		t.Fatal("a bar on a buffer: only terminals get one")
	}
	var quiet *bar
	if quiet.progress() != nil {
		t.Fatal("a nil bar reports progress")
	}
	quiet.clear()
	b := &bar{w: &buf}
	b.update(savetool.Progress{Stage: "checking", Done: 50, Total: 200})
	b.update(savetool.Progress{Stage: "checking", Done: 60, Total: 200}) // too soon: skipped
	b.update(savetool.Progress{Stage: "checking", Done: 200, Total: 200})
	b.clear()
	out := buf.String()
	for _, want := range []string{"checking", " 25%", "100%", "[=======", "\r\033[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, " 30%") {
		t.Errorf("bar redrew within 80 ms: %q", out)
	}
}

// onTerminal makes run believe that the writer w is a terminal, for the test.
func onTerminal(t *testing.T, w io.Writer) {
	t.Helper()
	old := isTerminal
	isTerminal = func(x io.Writer) bool { return x == w }
	t.Cleanup(func() { isTerminal = old })
}

// The bar goes to standard error, only when that is a terminal; -q and
// --json leave it out; standard output never holds it.
func TestProgressOnlyOnATerminalStderr(t *testing.T) {
	dir := fresh(t)
	for _, c := range []struct {
		args []string
		bar  bool
	}{
		{[]string{"check", dir}, true},
		{[]string{"check", "-q", dir}, false},
		{[]string{"check", "--json", dir}, false},
		{[]string{"compact", "--q", dir}, false},
		{[]string{"repair", "--dry-run", dir}, true},
	} {
		var out, errOut bytes.Buffer
		onTerminal(t, &errOut)
		code := run(c.args, &out, &errOut)
		expectCode(t, 0, code, errOut.String())
		if strings.Contains(out.String(), "\r") || strings.Contains(out.String(), "\033[") {
			t.Errorf("%v: the bar is on standard output:\n%q", c.args, out.String())
		}
		if got := strings.Contains(errOut.String(), "\r\033[K"); got != c.bar {
			t.Errorf("%v: bar on standard error %v, want %v:\n%q", c.args, got, c.bar, errOut.String())
		}
	}
	// Not a terminal: no bar anywhere.
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 0, code, stderr)
	expectNot(t, stdout+stderr, "\r", "\033[")
}
