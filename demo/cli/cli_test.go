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
	if o.Save != filepath.Join("/data", "arksave-demo", "world") || o.Seed != 1 || o.Chunk != 512 || o.Autosave != 30*time.Second || o.Headless || o.Load || o.Backups != 2 {
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
	for _, args := range [][]string{{"-chunk", "100"}, {"-chunk", "4096"}, {"-zoom", "0"}, {"-autosave", "-1s"}, {"-backups", "-1"}, {"-wait", "-1s"}, {"extra"}, {"-nosuchflag"}} {
		if _, err := cli.Parse(args, io.Discard); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	if _, err := cli.Parse([]string{"-h"}, io.Discard); !cli.IsHelp(err) {
		t.Errorf("-h: want ErrHelp, got %v", err)
	}
}

// The run's configuration carries the save settings to arksave.
func TestConfig(t *testing.T) {
	o, err := cli.Parse([]string{"-save", "/w", "-load", "-autosave", "2s", "-backups", "3", "-pause-saving", "-seed", "9", "-chunk", "256", "-wait", "1m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config(640, 360)
	s := c.Save
	if s.Dir != "/w" || !s.Load || s.Autosave != 2*time.Second || s.MaxBackups != 3 || !s.PauseDuringSave || c.Seed != 9 || c.ChunkSize != 256 || s.LockTimeout != time.Minute {
		t.Fatalf("config from the flags: %+v", c)
	}
	o, _ = cli.Parse([]string{"-autosave", "0"}, io.Discard)
	if o.Config(640, 360).Save.Autosave != 0 {
		t.Fatalf("-autosave 0 must turn autosave off")
	}
}
