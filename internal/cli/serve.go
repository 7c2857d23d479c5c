package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

func init() {
	register(&command{
		name:    "serve",
		args:    "[--addr HOST:PORT] [--palette FILE.json] [--poll D] [--at z=Z,w=W] DIR",
		summary: "serve a live web map and inspector of the save, read-only: tiles at several zoom levels, chunk records, pixel bodies, regional entities and players with their components, generations and backups, check; it follows a running game's saves",
		run:     runServe,
		flags:   func() *flag.FlagSet { return serveFlags(&serveArgs{}) },
	})
}

// servePoll is how often serve reads the manifest unless --poll says:
// often enough that the page follows a game's autosaves at once.
const servePoll = 250 * time.Millisecond

type serveArgs struct {
	addr, palette, at string
	poll              time.Duration
}

func serveFlags(a *serveArgs) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&a.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (port 0 picks a free one)")
	fs.StringVar(&a.palette, "palette", "", "read colours by material id from `FILE.json`, as render does (default: the demo's)")
	fs.DurationVar(&a.poll, "poll", servePoll, "read the manifest every `D` to follow new generations")
	fs.StringVar(&a.at, "at", "", "of a chunk store whose keys have 3 or 4 axes, show the 2-D slice at `z=Z,w=W` (default 0 for each)")
	return fs
}

func runServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve serves the map until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a serveArgs
	dir, err := pathArg(serveFlags(&a), args, dirArg)
	if err != nil {
		return err
	}
	if a.poll <= 0 {
		return usagef("--poll takes a positive duration, e.g. 250ms")
	}
	at, err := parseAt(a.at)
	if err != nil {
		return err
	}
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	o := mapserve.Options{FS: loc.FS, Poll: a.poll, At: at, Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	if a.palette != "" {
		pal, err := readPalette(a.palette)
		if err != nil {
			return err
		}
		pal.Color(0) // builds its table before the server's goroutines share it
		o.Palette = pal
	}
	m, err := mapserve.New(loc.Path, o)
	if errors.Is(err, chunkstore.ErrAxes) {
		return usagef("--at %s: %v", a.at, err)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	ln, err := net.Listen("tcp", a.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "serving the map of %s (generation %d) at http://%s/\n", vfs.Redact(dir), m.Generation(), ln.Addr())
	for _, w := range m.Warnings() {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if host, _, _ := net.SplitHostPort(a.addr); !isLoopback(host) {
		fmt.Fprintln(stdout, "note: other machines can reach it; it only ever reads the save")
	}
	fmt.Fprintln(stdout, "it follows the game's saves; Ctrl-C stops it")
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	m.Close() // ends the pages' event streams, so that Shutdown need not wait for them
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
