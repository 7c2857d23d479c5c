// Package cli holds the demo's command line: its flags, the default save
// directory, the wiring of a run (the world's configuration and its
// Persistence) and the headless entry point (HeadlessMain, the main of
// demo/headless). It imports no Ebiten, so the headless command never needs
// a display.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/vfs"

	// -save nats://host:4222/<world> keeps the world in NATS JetStream.
	_ "github.com/arksave/arksave/jetstream"
)

// Options are the demo's command-line flags.
type Options struct {
	Save        string        // save directory, or a world in NATS JetStream (nats://host:4222/<world>)
	Wait        time.Duration // how long to wait for another program that holds the save to let go
	Seed        uint64        // world seed
	Autosave    time.Duration // autosave interval; 0 turns it off
	Headless    bool          // no window: scripted player, JSON stats
	Ticks       int           // headless: ticks to run; windowed: exit (or screenshot) after this many
	Load        bool          // start from the save directory's last save
	Chunk       int           // chunk edge in pixels
	Screenshot  string        // windowed: PNG to write after -ticks frames, then exit
	Autoplay    bool          // windowed: the scripted player drives the game
	Overlay     bool          // windowed: start with the F3 overlay shown
	Menu        bool          // windowed: start with the load menu (L) open
	Zoom        int           // windowed: screen pixels per world pixel
	Backups     int           // older generations kept in the save's backups/
	PauseSaving bool          // pause sand and bodies while a save is written
}

// ErrHelp is returned by Parse for -h and -help.
var ErrHelp = flag.ErrHelp

// Parse reads the flags in args (without the program name). Usage and errors
// go to stderr.
func Parse(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Save, "save", DefaultSaveDir(), "save directory, or a world in NATS JetStream: nats://[user:password@]host:4222/<world>[?lease=10s&creds=file&tls_ca=file]")
	fs.DurationVar(&o.Wait, "wait", 0, "wait up to this long for the program that plays the world in -save to let go of it (with -load: take the world over once a killed one's lease expires)")
	fs.Uint64Var(&o.Seed, "seed", 1, "world seed")
	fs.DurationVar(&o.Autosave, "autosave", 30*time.Second, "autosave interval (0 turns autosave off)")
	fs.BoolVar(&o.Headless, "headless", false, "run without a window: scripted player, one JSON line of stats at the end (without a display: go run ./demo/headless)")
	fs.IntVar(&o.Ticks, "ticks", 0, "ticks to run (headless default 600; windowed: exit after this many frames, 0 runs until closed)")
	fs.BoolVar(&o.Load, "load", false, "continue from the last save in -save (without it a new world starts there; its old save becomes a backup)")
	fs.IntVar(&o.Backups, "backups", 2, "older generations to keep in the save's backups/")
	fs.BoolVar(&o.PauseSaving, "pause-saving", false, "pause sand and bodies while a save is written (arksave's PauseDuringSave)")
	fs.IntVar(&o.Chunk, "chunk", 512, "chunk size in pixels (a multiple of 64, 64..2048)")
	fs.StringVar(&o.Screenshot, "screenshot", "", "windowed: write the screen to this PNG after -ticks frames and exit")
	fs.BoolVar(&o.Autoplay, "autoplay", false, "windowed: let the scripted player play; it presses F5, F9 and F6 once each early on")
	fs.IntVar(&o.Zoom, "zoom", 2, "windowed: screen pixels per world pixel")
	fs.BoolVar(&o.Overlay, "overlay", false, "windowed: start with the F3 overlay shown")
	fs.BoolVar(&o.Menu, "menu", false, "windowed: start with the load menu open (L): the saves beside -save, newest first")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: demo [flags]\n\nThe arksave falling-sand demo.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("demo: unexpected argument %q", fs.Arg(0))
	}
	if o.Chunk < 64 || o.Chunk > 2048 || o.Chunk%64 != 0 {
		return o, fmt.Errorf("demo: -chunk %d: must be a multiple of 64 between 64 and 2048", o.Chunk)
	}
	if o.Autosave < 0 || o.Backups < 0 || o.Wait < 0 {
		return o, fmt.Errorf("demo: -autosave, -backups and -wait must not be negative")
	}
	if o.Zoom < 1 || o.Zoom > 8 {
		return o, fmt.Errorf("demo: -zoom %d: must be 1..8", o.Zoom)
	}
	if o.Headless && o.Ticks == 0 {
		o.Ticks = 600
	}
	if o.Screenshot != "" && o.Ticks == 0 {
		o.Ticks = 120
	}
	return o, nil
}

// DefaultSaveDir is the demo's save directory under the user's data folder:
// $XDG_DATA_HOME/arksave-demo/world, else ~/.local/share/arksave-demo/world
// on Unix; the user configuration directory elsewhere.
func DefaultSaveDir() string {
	const app = "arksave-demo"
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, app, "world")
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, ".local", "share", app, "world")
		}
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, app, "world")
	}
	return filepath.Join(os.TempDir(), app, "world")
}

// Config returns the world's configuration for these options, with a view of
// viewW x viewH world pixels: this is where the run's persistence is
// decided. Without -load a new world starts in -save (a save it holds
// becomes a backup); with -load the world continues from its last save.
func (o Options) Config(viewW, viewH int) sim.Config {
	return sim.Config{
		Seed: o.Seed, ChunkSize: o.Chunk, ViewW: viewW, ViewH: viewH,
		Save: sim.SaveConfig{
			Dir: o.Save, Load: o.Load, Autosave: o.Autosave,
			MaxBackups: o.Backups, PauseDuringSave: o.PauseSaving, LockTimeout: o.Wait,
		},
	}
}

// Headless runs the headless demo and returns the process exit code: the
// stats line goes to stdout, errors to stderr. A failed final save prints
// the stats, says so and exits 1. Ctrl-C or SIGTERM ends the run early with
// the same final save (a second one ends the process at once).
func Headless(o Options, stdout, stderr io.Writer) int {
	stop, release := OnSignal(stderr)
	defer release()
	Waiting(stderr, o)
	conf := o.Config(640, 360)
	conf.Save.OnSaving = func(line string) { fmt.Fprintf(stderr, "demo: %s\n", line) }
	_, err := sim.RunHeadless(sim.HeadlessOptions{
		Config: conf, Ticks: o.Ticks, Out: stdout, Stop: stop,
		Started: func(s *sim.Sim) { Ready(stderr, s) },
	})
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

// Ready tells on w that the world runs and where it saves: the line a
// person (or a test) waits for before interrupting the demo. A load that
// found the committed generation damaged and fell back says so first: the
// generation loaded and the damaged one kept.
func Ready(w io.Writer, s *sim.Sim) {
	where := s.Persistence.Dir()
	if vfs.Scheme(s.Config.Save.Dir) != "" {
		where = vfs.Redact(s.Config.Save.Dir) // the world's location, not its name on the server
	}
	if fb := s.Persistence.State().Fallback; fb != nil {
		fmt.Fprintf(w, "demo: %s (arksave check %s lists the damage)\n", fb, where)
	}
	fmt.Fprintf(w, "demo: playing; saving to %s (generation %d); Ctrl-C saves and exits, -load continues this world next time\n", where, s.Persistence.Generation())
}

// Waiting tells on w, with -wait, that the demo may wait for another
// program to let go of the world before it plays.
func Waiting(w io.Writer, o Options) {
	if o.Wait > 0 {
		fmt.Fprintf(w, "demo: opening %s; if another program plays it, waiting up to %v for it to let go\n", vfs.Redact(o.Save), o.Wait)
	}
}

// OnSignal returns a channel that is closed at the first SIGINT (Ctrl-C)
// or SIGTERM, which it names on w; after it, the signals have their usual
// effect again, so that a second Ctrl-C ends a final save that hangs.
// release stops listening.
func OnSignal(w io.Writer) (stop <-chan struct{}, release func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			signal.Stop(sig)
			fmt.Fprintf(w, "demo: %v: saving once more, then exiting\n", s)
			close(ch)
		case <-done:
		}
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			signal.Stop(sig)
			close(done)
		})
	}
}

// HeadlessMain is the headless command's main: it parses args (the
// window's flags; -headless is implied), runs the headless demo and returns
// the process exit code; -h prints usage and returns 0, a flag error 2.
func HeadlessMain(args []string, stdout, stderr io.Writer) int {
	o, err := Parse(append([]string{"-headless"}, args...), stderr)
	switch {
	case IsHelp(err):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 2
	}
	return Headless(o, stdout, stderr)
}

// IsHelp reports whether err asks for usage only.
func IsHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
