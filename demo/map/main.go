// Command map serves a live web map of the demo's save, drawn with the
// demo's own terrain generator and colours (the chunks nobody changed are
// drawn as generated), while the demo plays and autosaves into it:
//
//	make demo ARGS="-autosave 2s"    # in one terminal
//	go run ./demo/map                # in another; open http://127.0.0.1:8080/
//
// It is arksave serve (mapserve) with the game's generator and
// palette: it reads the save, never writes it and never takes its lock.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/arksave/arksave/demo/cli"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/mapserve"
)

func main() {
	save := flag.String("save", cli.DefaultSaveDir(), "the demo's save directory")
	addr := flag.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`")
	flag.Parse()
	m, err := mapserve.New(*save, mapserve.Options{Generator: terrain.Generator{}, Palette: render.MapPalette()})
	if err == nil {
		var ln net.Listener
		if ln, err = net.Listen("tcp", *addr); err == nil {
			fmt.Printf("the map of %s at http://%s/ (Ctrl-C stops it)\n", *save, ln.Addr())
			err = (&http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
		}
	}
	fmt.Fprintln(os.Stderr, "map:", err)
	os.Exit(1)
}
