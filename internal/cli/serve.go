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
	neturl "net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	plugin "github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

func init() {
	register(&command{
		name:    "serve",
		args:    "[--addr HOST:PORT] [--palette FILE.json] [--poll D] [--at z=Z,w=W] [--key-file FILE] DIR [DIR...] | --root FOLDER",
		summary: "serve a live web map and inspector of one save or several (each at /w/NAME/, with a switcher), read-only: tiles at several zoom levels, chunk records, pixel bodies, regional entities and players with their components, go to and find, generations and backups, check; it follows a running game's saves",
		run:     runServe,
		flags:   func() *flag.FlagSet { return serveFlags(&serveArgs{}) },
	})
}

// servePoll is how often serve reads the manifest unless --poll says:
// often enough that the page follows a game's autosaves at once.
const servePoll = 250 * time.Millisecond

type serveArgs struct {
	addr, palette, root, at, keyFile string
	poll                             time.Duration
}

func serveFlags(a *serveArgs) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&a.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (port 0 picks a free one)")
	fs.StringVar(&a.palette, "palette", "", "read colours by material id from `FILE.json`, as render does (default: the demo's)")
	fs.DurationVar(&a.poll, "poll", servePoll, "read the manifest every `D` to follow new generations")
	fs.StringVar(&a.at, "at", "", "of a chunk store whose keys have 3 or 4 axes, show the 2-D slice at `z=Z,w=W` (default 0 for each)")
	fs.StringVar(&a.root, "root", "", "serve every save slot in `FOLDER` (the saves a game's load menu lists), each at /w/NAME/")
	return keyFileFlag(fs, &a.keyFile)
}

func runServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serveDirs returns the save directories serve is given: its arguments,
// or the slots in --root; multi says whether they are served each at
// /w/NAME/.
func serveDirs(a *serveArgs, args []string, stdout io.Writer) (dirs []string, multi bool, err error) {
	rest, err := parseFlags(serveFlags(a), args)
	if err != nil {
		return nil, false, err
	}
	if a.poll <= 0 {
		return nil, false, usagef("--poll takes a positive duration, e.g. 250ms")
	}
	switch {
	case a.root != "" && len(rest) > 0:
		return nil, false, usagef("give save directories or --root FOLDER, not both")
	case a.root == "" && len(rest) == 0:
		return nil, false, usagef("no %s given", dirArg)
	case a.root == "":
		return rest, len(rest) > 1, nil
	}
	slots, err := plugin.ListSaves(a.root)
	if err != nil {
		return nil, false, err
	}
	for _, s := range slots {
		if s.Err != nil && s.Generation == 0 {
			fmt.Fprintf(stdout, "skipping %s: %v\n", s.Dir, s.Err)
			continue
		}
		dirs = append(dirs, s.Dir)
	}
	if len(dirs) == 0 {
		return nil, false, fmt.Errorf("%w: %s holds no save that opens: give a folder of save directories (see arksave.ListSaves)", plugin.ErrNoSave, a.root)
	}
	return dirs, true, nil
}

// openMaps opens a map server for each directory; closing closes them.
func openMaps(dirs []string, o mapserve.Options) (servers []*mapserve.Server, closing func(), err error) {
	var locs []*vfs.Location
	closing = func() {
		for _, s := range servers {
			s.Close()
		}
		for _, l := range locs {
			l.Close()
		}
	}
	for _, dir := range dirs {
		loc, err := openLocation(dir)
		if err != nil {
			closing()
			return nil, nil, err
		}
		locs = append(locs, loc)
		o.FS = loc.FS
		m, err := mapserve.New(loc.Path, o)
		if errors.Is(err, chunkstore.ErrAxes) {
			closing()
			return nil, nil, usagef("--at: %v", err)
		}
		if err != nil {
			closing()
			return nil, nil, err
		}
		servers = append(servers, m)
	}
	return servers, closing, nil
}

// serve serves the map until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a serveArgs
	dirs, multi, err := serveDirs(&a, args, stdout)
	if err != nil {
		return err
	}
	at, err := parseAt(a.at)
	if err != nil {
		return err
	}
	key, err := readKeyFile(a.keyFile)
	if err != nil {
		return err
	}
	o := mapserve.Options{Poll: a.poll, At: at, Key: key, Logger: slog.New(slog.NewTextHandler(stderr, nil))}
	if a.palette != "" {
		pal, err := readPalette(a.palette)
		if err != nil {
			return err
		}
		pal.Color(0) // builds its table before the server's goroutines share it
		o.Palette = pal
	}
	servers, closing, err := openMaps(dirs, o)
	if err != nil {
		return err
	}
	defer closing()
	var h http.Handler = servers[0]
	if multi {
		if h, err = mapserve.NewMulti(servers...); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", a.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	announce(stdout, a.addr, ln.Addr().String(), dirs, servers, multi)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	for _, m := range servers {
		m.Close() // ends the pages' event streams, so that Shutdown need not wait for them
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// announce says where the maps are served and what they lack.
func announce(stdout io.Writer, addr, at string, dirs []string, servers []*mapserve.Server, multi bool) {
	for i, m := range servers {
		url := fmt.Sprintf("http://%s/", at)
		if multi {
			url = fmt.Sprintf("http://%s/w/%s/", at, neturl.PathEscape(filepath.Base(dirs[i])))
		}
		fmt.Fprintf(stdout, "serving the map of %s (generation %d) at %s\n", vfs.Redact(dirs[i]), m.Generation(), url)
		for _, w := range m.Warnings() {
			fmt.Fprintf(stdout, "warning: %s\n", w)
		}
	}
	fmt.Fprintln(stdout, "note: terrain not generated: only stored chunks are drawn; a game serves its map with its generator through mapserve.Options.Generator (see demo/map)")
	if host, _, _ := net.SplitHostPort(addr); !isLoopback(host) {
		fmt.Fprintln(stdout, "note: other machines can reach it; it only ever reads the save")
	}
	fmt.Fprintln(stdout, "it follows the game's saves; Ctrl-C stops it")
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
