package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arksave/arksave/savetool"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	if newBar(&buf) != nil {
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
