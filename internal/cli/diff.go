package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "diff",
		args:    "[--json] [--all] [--key-file FILE] DIR A B",
		summary: "list what differs from generation A to generation B of a save (each a generation number or current): chunks, bodies, regional entities, players, the world's entities",
		run:     runDiff,
		flags:   func() *flag.FlagSet { return keyFileFlag(diffFlags(new(bool), new(bool)), new(string)) },
	})
}

// diffListMax is how many items of each list the summary shows without
// --all.
const diffListMax = 20

func diffFlags(asJSON, all *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.BoolVar(asJSON, "json", false, "write the whole diff as JSON")
	fs.BoolVar(all, "all", false, fmt.Sprintf("list every item (the summary lists %d of each kind)", diffListMax))
	return fs
}

func runDiff(args []string, stdout, stderr io.Writer) error {
	var asJSON, all bool
	var keyFile string
	rest, err := parseFlags(keyFileFlag(diffFlags(&asJSON, &all), &keyFile), args)
	if err != nil {
		return err
	}
	key, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	if len(rest) != 3 {
		return usagef("want a save directory and two generations (DIR A B), got %d arguments", len(rest))
	}
	dir := rest[0]
	a, err := generationArg(rest[1], dir)
	if err != nil {
		return err
	}
	b, err := generationArg(rest[2], dir)
	if err != nil {
		return err
	}
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	r, err := savetool.Diff(loc.Path, a, b, savetool.Options{FS: loc.FS, Key: key})
	if err != nil {
		return err
	}
	r.Dir = dir
	if asJSON {
		err = writeJSON(stdout, r)
	} else {
		writeDiff(stdout, r, all)
	}
	if r.WorldEncrypted {
		fmt.Fprintln(stderr, "arksave diff: the world files are encrypted and were not compared; give the save's key with --key-file FILE")
	}
	if err == nil && len(r.Damaged) > 0 {
		fmt.Fprintf(stderr, "arksave diff: %d damaged %s not compared: arksave check %s lists the damage, arksave repair %s mends it\n",
			len(r.Damaged), plural(len(r.Damaged), "item", "items"), dir, dir)
		return errReported
	}
	return err
}

// generationArg reads a generation argument: a generation number, or
// current (the committed generation, 0 for savetool).
func generationArg(arg, dir string) (uint64, error) {
	if arg == "current" {
		return 0, nil
	}
	g, err := strconv.ParseUint(arg, 10, 64)
	if err != nil || g == 0 {
		return 0, usagef("generation %q: give a generation number (arksave inspect %s lists the kept ones) or current", arg, dir)
	}
	return g, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// diffList is one kind of item of a diff, as the summary lists it.
type diffList struct {
	one, many string
	lines     []string
}

// writeDiff writes a diff for people: what differs, counted, then each
// kind of item, at most diffListMax of each unless all.
func writeDiff(w io.Writer, r *savetool.DiffReport, all bool) {
	lists := diffLists(r)
	fmt.Fprintf(w, "generation %d -> generation %d of %s: ", r.A, r.B, r.Dir)
	var counts []string
	for _, l := range lists {
		if len(l.lines) > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", len(l.lines), plural(len(l.lines), l.one, l.many)))
		}
	}
	switch {
	case len(counts) == 0:
		fmt.Fprint(w, "nothing differs")
	default:
		fmt.Fprint(w, strings.Join(counts, ", "))
	}
	if r.Shared > 0 {
		fmt.Fprintf(w, " (%d store %s shared, not read)", r.Shared, plural(r.Shared, "entry", "entries"))
	}
	fmt.Fprintln(w)
	for _, l := range lists {
		if len(l.lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d):\n", l.many, len(l.lines))
		shown := l.lines
		if !all && len(shown) > diffListMax {
			shown = shown[:diffListMax]
		}
		for _, line := range shown {
			fmt.Fprintf(w, "  %s\n", line)
		}
		if n := len(l.lines) - len(shown); n > 0 {
			fmt.Fprintf(w, "  ... and %d more (--all lists them)\n", n)
		}
	}
}

// diffLists writes the items of a diff as lines, kind by kind.
func diffLists(r *savetool.DiffReport) []diffList {
	lists := []diffList{{one: "chunk", many: "chunks"}, {one: "body", many: "bodies"}, {one: "regional entity", many: "regional entities"},
		{one: "player", many: "players"}, {one: "world entity", many: "world entities"}, {one: "resource", many: "resources"},
		{one: "damaged item", many: "damaged"}}
	for _, c := range r.Chunks {
		lists[0].lines = append(lists[0].lines, chunkLine(c))
	}
	for _, b := range r.Bodies {
		lists[1].lines = append(lists[1].lines, fmt.Sprintf("%-20d %-8s %s", b.ID, b.Kind, where(b.From, b.To)))
	}
	for _, e := range r.Regional {
		lists[2].lines = append(lists[2].lines, fmt.Sprintf("%-20d %-8s %s", e.ID, e.Kind, where(e.From, e.To))+withComponents(e.Components))
	}
	for _, p := range r.Players {
		lists[3].lines = append(lists[3].lines, fmt.Sprintf("%-20q %s", p.ID, p.Kind))
	}
	for _, e := range r.World {
		lists[4].lines = append(lists[4].lines, fmt.Sprintf("%-20s %s", fmt.Sprintf("[%d, %d]", e.Entity[0], e.Entity[1]), e.Kind)+withComponents(e.Components))
	}
	for _, res := range r.Resources {
		lists[5].lines = append(lists[5].lines, fmt.Sprintf("%s %s", res.Name, res.Kind))
	}
	for _, d := range r.Damaged {
		lists[6].lines = append(lists[6].lines, fmt.Sprintf("generation %d: %s: %s", d.Generation, d.What, d.Err))
	}
	return lists
}

// withComponents lists the components that differ after a line: ": A, B".
func withComponents(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return ": " + strings.Join(names, ", ")
}

// chunkLine describes a chunk that differs.
func chunkLine(c savetool.ChunkChange) string {
	pos := fmt.Sprintf("(%d, %d)", c.X, c.Y)
	if len(c.Key) > 0 {
		pos = savetool.KeyText(c.Key)
	}
	var types string
	switch c.Kind {
	case savetool.ChangeAdded:
		types = c.To
	case savetool.ChangeRemoved:
		types = c.From
	default:
		types = c.From + " -> " + c.To
	}
	line := fmt.Sprintf("%-20s %-8s %s", pos, c.Kind, types)
	switch {
	case c.AtLeast && c.Pixels == 0:
		line += ", pixels not counted (that needs the game's generator)"
	case c.AtLeast:
		line += fmt.Sprintf(", at least %d %s", c.Pixels, plural(c.Pixels, "pixel", "pixels"))
	case c.Kind == savetool.ChangeChanged || c.Pixels > 0:
		line += fmt.Sprintf(", %d %s", c.Pixels, plural(c.Pixels, "pixel", "pixels"))
	}
	if c.Extra {
		line += ", extra data"
	}
	return line
}

// where says in which chunk an item was and is.
func where(from, to *savetool.DiffPos) string {
	switch {
	case from == nil && to != nil:
		return "in " + to.String()
	case to == nil && from != nil:
		return "from " + from.String()
	case from != nil && !from.Equal(*to):
		return from.String() + " -> " + to.String()
	case from != nil:
		return "in " + from.String()
	}
	return ""
}
