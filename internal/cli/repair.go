package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/words"
)

func init() {
	register(&command{
		name:    "repair",
		args:    "[--dry-run] [--empty-world] [--empty-chunks] [--chunk-size N --tile-size N --seed N --generator-version N] [-q] DIR",
		summary: "recover everything recoverable into a new generation; report what was kept and dropped",
		run:     runRepair,
		flags:   func() *flag.FlagSet { return repairFlags(&repairArgs{}) },
	})
}

type repairArgs struct {
	o                   savetool.RepairOptions
	quiet               bool
	chunkSize, tileSize uint
	genVersion          int64
}

func repairFlags(a *repairArgs) *flag.FlagSet {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	fs.BoolVar(&a.o.DryRun, "dry-run", false, "report what a repair would keep and drop; write nothing")
	fs.BoolVar(&a.o.EmptyWorld, "empty-world", false, "when no intact ECS world file is left, keep the chunks with an empty ECS world")
	fs.BoolVar(&a.o.EmptyChunks, "empty-chunks", false, "when no chunk store can be read, keep the ECS world with no stored chunks (all regenerate)")
	fs.UintVar(&a.chunkSize, "chunk-size", 0, "the game's chunk size `N`, when nothing in the directory records it")
	fs.UintVar(&a.tileSize, "tile-size", 0, "the game's tile size `N`, when nothing in the directory records it")
	fs.Uint64Var(&a.o.Seed, "seed", 0, "the world seed `N`, when nothing in the directory records it")
	fs.Int64Var(&a.genVersion, "generator-version", -1, "the game's generator version `N`, when nothing in the directory records it (-1: not given)")
	quietFlag(fs, &a.quiet)
	return fs
}

func runRepair(args []string, stdout, stderr io.Writer) error {
	var a repairArgs
	dir, err := pathArg(repairFlags(&a), args, dirArg)
	if err != nil {
		return err
	}
	if a.chunkSize > 4096 || a.tileSize > 4096 || a.genVersion >= 1<<24 {
		return usagef("--chunk-size and --tile-size are at most 4096, --generator-version below 16777216")
	}
	a.o.ChunkSize, a.o.TileSize = uint16(a.chunkSize), uint16(a.tileSize)
	if a.genVersion >= 0 {
		a.o.Generator = savetool.VersionOnly(uint32(a.genVersion))
	}
	b := newBar(stderr, a.quiet)
	a.o.Progress = b.progress()
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	a.o.FS = loc.FS
	rep, err := savetool.Repair(loc.Path, a.o)
	b.clear()
	if err != nil {
		return err
	}
	printRepair(stdout, dir, rep)
	if rep.After != nil && !rep.After.OK() {
		fmt.Fprintf(stderr, "arksave repair: %s still has %s after the repair; please report this with the output of arksave check\n",
			dir, words.Count(len(rep.After.Problems), "problem", "problems"))
		return errReported
	}
	return nil
}

func printRepair(w io.Writer, dir string, r *savetool.RepairReport) {
	if r.NothingToDo {
		fmt.Fprintf(w, "%s: no problems found; nothing to repair\n", dir)
		return
	}
	fmt.Fprintf(w, "%s: %s found\n", dir, words.Count(len(r.Before.Problems), "problem", "problems"))
	for _, p := range r.Before.Problems {
		fmt.Fprintf(w, "  %v\n", p)
	}
	fmt.Fprintf(w, "manifest: %s\n", r.Manifest)
	if r.World.File != "" || r.World.Empty {
		switch {
		case r.World.Empty:
			fmt.Fprintln(w, "ECS world: empty (no intact world file)")
		case r.World.Fallback:
			fmt.Fprintf(w, "ECS world: %s (generation %d), the newest intact world file\n", r.World.File, r.World.Generation)
		default:
			fmt.Fprintf(w, "ECS world: %s (generation %d)\n", r.World.File, r.World.Generation)
		}
	}
	if r.Store.File != "" {
		line := fmt.Sprintf("chunks: %s, store generation %d, through %s", r.Store.File, r.Store.Generation, r.Store.How)
		if strings.HasPrefix(r.Store.How, "kept") {
			line = fmt.Sprintf("chunks: %s, store generation %d, %s", r.Store.File, r.Store.Generation, r.Store.How)
		}
		if r.Store.New != "" {
			line += ", copied to " + r.Store.New
		}
		fmt.Fprintln(w, line)
	}
	k := r.Kept
	fmt.Fprintf(w, "kept: %s (%d full, %d delta, %d empty, %d palette), %s in %s\n", words.Count(k.Chunks, "chunk", "chunks"), k.Full, k.Delta, k.Empty, k.Palette,
		words.Count(k.Bodies, "body", "bodies"), words.Count(k.BodyBlocks, "chunk", "chunks"))
	for _, l := range r.Dropped {
		fmt.Fprintf(w, "dropped: %v; %s\n", l, regenerates(l))
	}
	for _, l := range r.Reverted {
		fmt.Fprintf(w, "reverted: %v\n", l)
	}
	if len(r.BackupsKept) > 0 {
		fmt.Fprintf(w, "backups kept: %v\n", r.BackupsKept)
	}
	if len(r.BackupsRewritten) > 0 {
		fmt.Fprintf(w, "backups copied out of the damaged chunk store: %v\n", r.BackupsRewritten)
	}
	for _, b := range r.BackupsDropped {
		fmt.Fprintf(w, "dropped %v\n", b)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch {
	case r.DryRun:
		fmt.Fprintln(w, "dry run: nothing was written")
	case r.Generation > 0:
		fmt.Fprintf(w, "committed generation %d\n", r.Generation)
	}
	if r.After != nil && r.After.OK() {
		fmt.Fprintf(w, "%s: no problems found\n", dir)
	}
}

func regenerates(l savetool.Loss) string {
	if l.Bodies {
		return "those bodies are gone"
	}
	return "the chunk regenerates"
}
