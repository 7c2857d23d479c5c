// Command map serves a live web map of the demo's save, drawn with the
// demo's own terrain generator and colours (the chunks nobody changed are
// drawn as generated), while the demo plays and autosaves into it:
//
//	make demo ARGS="-autosave 2s"    # in one terminal
//	go run ./demo/map                # in another; open http://127.0.0.1:8080/
//	go run ./demo/map -all           # every save slot beside it, with a switcher
//
// It is arksave serve (mapserve) with the game's generator and palette,
// given through mapserve.Options: it reads the saves, never writes them
// and never takes their locks. With -all it serves each slot the demo's
// load menu lists (arksave.ListSaves) at /w/NAME/ (mapserve.NewMulti).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/demo/cli"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/mapserve"
)

func main() {
	save := flag.String("save", cli.DefaultSaveDir(), "the demo's save directory")
	all := flag.Bool("all", false, "serve every save slot in the save directory's folder, each at /w/NAME/, with a switcher")
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	flag.Parse()
	err := serve(*save, *all, *addr)
	fmt.Fprintln(os.Stderr, "map:", err)
	os.Exit(1)
}

// serve serves the map of save, or of every slot beside it, until it fails.
func serve(save string, all bool, addr string) error {
	dirs := []string{save}
	if all {
		slots, err := arksave.ListSaves(filepath.Dir(save))
		if err != nil {
			return err
		}
		dirs = dirs[:0]
		for _, s := range slots {
			if s.Err == nil {
				dirs = append(dirs, s.Dir)
			}
		}
	}
	// The game's generator and colours: unstored chunks are drawn as the
	// game would generate them, and the page says nothing is missing.
	o := mapserve.Options{Generator: terrain.Generator{}, Palette: render.MapPalette()}
	var servers []*mapserve.Server
	for _, dir := range dirs {
		m, err := mapserve.New(dir, o)
		if err != nil {
			return err
		}
		defer m.Close()
		servers = append(servers, m)
	}
	if len(servers) == 0 {
		return fmt.Errorf("no save slot beside %s opens", save)
	}
	var h http.Handler = servers[0]
	if all {
		var err error
		if h, err = mapserve.NewMulti(servers...); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("the map of %s at http://%s/ (Ctrl-C stops it)\n", save, ln.Addr())
	if all {
		fmt.Printf("%d save slots, each at http://%s/w/NAME/\n", len(servers), ln.Addr())
	}
	return (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}
