package cli_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/demo/cli"
)

func TestParseDefaults(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	o, err := cli.Parse(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Save != filepath.Join("/data", "arksave-demo", "world") || o.Seed != 1 || o.Chunk != 512 || o.Autosave != 30*time.Second || o.Headless {
		t.Fatalf("unexpected defaults: %+v", o)
	}
	o, err = cli.Parse([]string{"-headless"}, io.Discard)
	if err != nil || o.Ticks != 600 {
		t.Fatalf("headless without -ticks runs 600 ticks: %+v %v", o, err)
	}
	o, err = cli.Parse([]string{"-screenshot", "x.png"}, io.Discard)
	if err != nil || o.Ticks == 0 {
		t.Fatalf("a screenshot needs a tick count: %+v %v", o, err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, args := range [][]string{{"-chunk", "100"}, {"-chunk", "4096"}, {"-zoom", "0"}, {"extra"}, {"-nosuchflag"}} {
		if _, err := cli.Parse(args, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	if _, err := cli.Parse([]string{"-h"}, io.Discard); !cli.IsHelp(err) {
		t.Errorf("-h: want ErrHelp, got %v", err)
	}
}
