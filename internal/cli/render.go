package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "render",
		args:    "-o FILE.png [--region X0,Y0,X1,Y1] [--grid] [--scale N | --zoom N] [--palette FILE.json] [--generation G] [--no-bodies] [--at z=Z,w=W] [--key-file FILE] [-q] DIR",
		summary: "draw the saved pixel world as a PNG: stored chunks as saved, unstored ones hatched grey, bodies on top",
		run:     runRender,
		flags:   func() *flag.FlagSet { return renderFlags(&renderArgs{}) },
	})
}

type renderArgs struct {
	quiet                             bool
	out, region, palette, at, keyFile string
	o                                 savetool.RenderOptions
}

func renderFlags(a *renderArgs) *flag.FlagSet {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.StringVar(&a.out, "o", "", "write the image to `FILE.png`")
	fs.StringVar(&a.region, "region", "", "draw world pixels `X0,Y0,X1,Y1`, X1 and Y1 excluded (default: every stored chunk)")
	fs.BoolVar(&a.o.Grid, "grid", false, "draw chunk borders; stored chunks framed by type: full orange, palette violet, delta cyan, empty white, damaged red")
	fs.IntVar(&a.o.Scale, "scale", 0, "average `N`xN world pixels into one image pixel (default: 1, or what keeps the image within 4096 pixels)")
	fs.IntVar(&a.o.Zoom, "zoom", 0, "draw each world pixel as `N`xN image pixels, for small chunks and close looks (default 1)")
	fs.StringVar(&a.palette, "palette", "", "read colours by material id from `FILE.json`: {\"air\": \"#9cc8ec\", \"materials\": {\"1\": \"#8d8c93\", \"4\": [\"#c9a45c\", \"#f0d68c\"]}} (default: the demo's)")
	fs.Uint64Var(&a.o.Generation, "generation", 0, "render backed-up generation `G` instead of the current one")
	fs.BoolVar(&a.o.NoBodies, "no-bodies", false, "leave the stored pixel bodies out")
	fs.StringVar(&a.at, "at", "", "of a chunk store whose keys have 3 or 4 axes, draw the 2-D slice at `z=Z,w=W` (default 0 for each)")
	quietFlag(fs, &a.quiet)
	return keyFileFlag(fs, &a.keyFile)
}

func runRender(args []string, stdout, stderr io.Writer) error {
	var a renderArgs
	dir, err := pathArg(renderFlags(&a), args, dirArg)
	if err != nil {
		return err
	}
	if a.out == "" {
		return usagef("give the PNG file to write with -o FILE.png")
	}
	switch {
	case a.o.Scale < 0 || a.o.Zoom < 0:
		return usagef("--scale and --zoom take a positive number")
	case a.o.Scale > 1 && a.o.Zoom > 1:
		return usagef("--scale shrinks and --zoom enlarges: give one of them")
	}
	if a.region != "" {
		if a.o.Region, err = parseRegion(a.region); err != nil {
			return err
		}
	}
	if a.o.At, err = parseAt(a.at); err != nil {
		return err
	}
	if a.o.Key, err = readKeyFile(a.keyFile); err != nil {
		return err
	}
	if a.palette != "" {
		pal, err := readPalette(a.palette)
		if err != nil {
			return err
		}
		a.o.Palette = pal
	}
	b := newBar(stderr, a.quiet)
	a.o.Progress = b.progress()
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	a.o.FS = loc.FS
	img, st, err := savetool.RenderDir(loc.Path, a.o)
	if err == nil {
		err = writePNG(a.out, img)
	}
	b.clear()
	if errors.Is(err, chunkstore.ErrAxes) {
		return usagef("--at %s: %v", a.at, err)
	}
	if err != nil {
		return err
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(stderr, "arksave render: %s\n", warn)
	}
	fmt.Fprintf(stdout, "wrote %s: %dx%d pixels of world %v", a.out, img.Rect.Dx(), img.Rect.Dy(), st.Region)
	if st.Scale > 1 {
		fmt.Fprintf(stdout, " at 1:%d", st.Scale)
	} else if a.o.Zoom > 1 {
		fmt.Fprintf(stdout, " at %d:1", a.o.Zoom)
	}
	fmt.Fprintf(stdout, "\n%d stored chunks (%d full, %d delta over a grey base, %d empty, %d palette), %d unstored (hatched), %d bodies",
		st.Full+st.Palette+st.Delta+st.Empty, st.Full, st.Delta, st.Empty, st.Palette, st.Unstored, st.Bodies)
	if st.Damaged > 0 {
		fmt.Fprintf(stdout, ", %d damaged (red)", st.Damaged)
	}
	fmt.Fprintln(stdout)
	return nil
}

// parseAt reads the --at flag of render and serve, "z=Z,w=W" (either or
// both, in any order): the slice of a store of 3 or 4 axes to draw.
func parseAt(s string) ([2]int32, error) {
	var at [2]int32
	if s == "" {
		return at, nil
	}
	seen := [2]bool{}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		i := strings.Index("zw", name)
		if !ok || len(name) != 1 || i < 0 {
			return at, usagef("--at %q: want z=Z,w=W (the axes beyond x and y)", s)
		}
		if seen[i] {
			return at, usagef("--at %q: %s given twice", s, name)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return at, usagef("--at %q: %s=%q is not a 32-bit integer", s, name, v)
		}
		at[i], seen[i] = int32(n), true
	}
	return at, nil
}

func parseRegion(s string) (image.Rectangle, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return image.Rectangle{}, usagef("--region %q: want X0,Y0,X1,Y1", s)
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return image.Rectangle{}, usagef("--region %q: %q is not a number", s, p)
		}
		v[i] = n
	}
	if v[2] <= v[0] || v[3] <= v[1] {
		return image.Rectangle{}, usagef("--region %q: X1 must exceed X0 and Y1 exceed Y0", s)
	}
	return image.Rect(v[0], v[1], v[2], v[3]), nil
}

// readPalette reads a palette file: {"air": colour, "materials": {id: colour or [dark, light]}}.
func readPalette(path string) (*savetool.MaterialPalette, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("palette: %w", err)
	}
	var raw struct {
		Air       string                     `json:"air"`
		Materials map[string]json.RawMessage `json:"materials"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("palette %s: %w", path, err)
	}
	pal := savetool.DefaultPalette()
	if raw.Air != "" {
		if pal.Air, err = parseColour(raw.Air); err != nil {
			return nil, fmt.Errorf("palette %s: air: %w", path, err)
		}
	}
	if raw.Materials != nil {
		pal.Ramps = map[uint8]savetool.Ramp{}
	}
	for id, v := range raw.Materials {
		m, err := strconv.ParseUint(id, 10, 8)
		if err != nil || m == 0 {
			return nil, fmt.Errorf("palette %s: material %q: want an id from 1 to 255", path, id)
		}
		var one string
		var two []string
		var ramp savetool.Ramp
		switch {
		case json.Unmarshal(v, &one) == nil:
			c, err := parseColour(one)
			if err != nil {
				return nil, fmt.Errorf("palette %s: material %s: %w", path, id, err)
			}
			ramp = savetool.Ramp{Dark: c, Light: c}
		case json.Unmarshal(v, &two) == nil && len(two) == 2:
			if ramp.Dark, err = parseColour(two[0]); err == nil {
				ramp.Light, err = parseColour(two[1])
			}
			if err != nil {
				return nil, fmt.Errorf("palette %s: material %s: %w", path, id, err)
			}
		default:
			return nil, fmt.Errorf("palette %s: material %s: want \"#rrggbb\" or [\"#dark\", \"#light\"]", path, id)
		}
		pal.Ramps[uint8(m)] = ramp
	}
	return pal, nil
}

func parseColour(s string) (color.RGBA, error) {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(strings.TrimPrefix(s, "#")) != 6 {
		return color.RGBA{}, fmt.Errorf("colour %q: want #rrggbb", s)
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}, nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	if err := png.Encode(w, img); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
