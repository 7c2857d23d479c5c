package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/arksave/arksave/internal/savetool"
)

// bar draws one line of progress on a terminal. It is a few lines of our
// own rather than github.com/schollz/progressbar: the tool needs one bar of
// known or estimated size, and the library's go.mod stays free of that
// module's four dependencies.
type bar struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	line  string // last drawn
	shown bool
}

// newBar returns a bar drawing on stderr when stderr is a terminal and the
// command was not asked to be quiet (-q, or --json: machine output comes
// without a bar), else nil (a nil bar is quiet). The bar never goes to
// standard output, which holds the command's result.
func newBar(stderr io.Writer, quiet bool) *bar {
	if quiet || !isTerminal(stderr) {
		return nil
	}
	return &bar{w: stderr}
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress returns the callback for savetool.Options, nil for a nil bar.
func (b *bar) progress() func(savetool.Progress) {
	if b == nil {
		return nil
	}
	return b.update
}

func (b *bar) update(p savetool.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.last) < 80*time.Millisecond && p.Done < p.Total {
		return
	}
	b.last = now
	const width = 30
	line := p.Stage
	if p.Total > 0 {
		frac := min(1, float64(p.Done)/float64(p.Total))
		n := int(frac * width)
		line = fmt.Sprintf("%-28.28s [%s%s] %3.0f%%", p.Stage, strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac)
	} else if p.Done > 0 {
		line = fmt.Sprintf("%-28.28s %d", p.Stage, p.Done)
	}
	if line == b.line {
		return
	}
	b.line = line
	fmt.Fprintf(b.w, "\r\033[K%s", line)
	b.shown = true
}

// clear removes the bar's line, before the command prints its result.
func (b *bar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r\033[K")
		b.shown, b.line = false, ""
	}
}
