package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
)

func init() {
	register(&command{
		name:    "check",
		args:    "[--json] [-q] [--key-file FILE] DIR|FILE",
		summary: "verify every checksum and cross-reference; list each damaged item; exit 0 when intact, 1 when damaged",
		run:     runCheck,
		flags:   func() *flag.FlagSet { return keyFileFlag(checkFlags(new(bool), new(bool)), new(string)) },
	})
}

func checkFlags(asJSON, quiet *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.BoolVar(asJSON, "json", false, "print the problems as JSON")
	quietFlag(fs, quiet)
	return fs
}

func runCheck(args []string, stdout, stderr io.Writer) error {
	var asJSON, quiet bool
	var keyFile string
	path, err := pathArg(keyFileFlag(checkFlags(&asJSON, &quiet), &keyFile), args, anyPath)
	if err != nil {
		return err
	}
	key, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	loc, err := openLocation(path)
	if err != nil {
		return err
	}
	defer loc.Close()
	b := newBar(stderr, quiet || asJSON)
	r, err := savetool.Check(loc.Path, savetool.Options{FS: loc.FS, Progress: b.progress(), Key: key})
	b.clear()
	if err != nil {
		return err
	}
	isDir := false
	if st, err := loc.FS.Stat(loc.Path); err == nil {
		isDir = st.IsDir()
	}
	if asJSON {
		if err := printCheckJSON(stdout, path, r); err != nil {
			return err
		}
	} else {
		printCheck(stdout, path, isDir, r)
	}
	if !r.OK() || r.WrongKey > 0 || r.WrongKeyRecords > 0 {
		return errReported
	}
	return nil
}

func printCheck(w io.Writer, path string, isDir bool, r *savetool.CheckReport) {
	for _, p := range r.Problems {
		fmt.Fprintln(w, p)
	}
	checked := fmt.Sprintf("%s and %s checked", words.Count(r.Worlds, "world file", "world files"),
		words.Count(r.Stores, "chunk store generation", "chunk store generations"))
	if r.Players > 0 {
		checked = fmt.Sprintf("%s, %s and %s checked", words.Count(r.Worlds, "world file", "world files"),
			words.Count(r.Stores, "chunk store generation", "chunk store generations"), words.Count(r.Players, "players index", "players indexes"))
	}
	if r.Manifest != nil {
		checked = fmt.Sprintf("generation %d and %s: %s", r.Manifest.Generation, words.Count(r.Backups, "backup", "backups"), checked)
	}
	if types := storetool.Tool.TypeCounts(r.Types); types != "" {
		checked += "; chunk store entries: " + types
	}
	if r.Zstd > 0 {
		checked += fmt.Sprintf("; %s stored as zstd", words.Count(r.Zstd, "record", "records"))
	}
	encryptedCheckNote(w, r)
	if r.OK() {
		fmt.Fprintf(w, "%s: no problems found (%s)\n", path, checked)
		if r.Manifest != nil && r.Manifest.Version < savedir.ManifestVersion {
			fmt.Fprintf(w, "note: the manifest is in format %d; arksave migrate %s upgrades it to %d\n", r.Manifest.Version, path, savedir.ManifestVersion)
		}
		return
	}
	fmt.Fprintf(w, "%s found (%s)\n", words.Count(len(r.Problems), "problem", "problems"), checked)
	if deniedOnly(w, r.Problems) {
		return // nothing to repair
	}
	if isDir && pixelsOnly(r.Problems) {
		fmt.Fprintf(w, "arksave migrate %s rewrites the chunk store with 4-byte pixels when every value fits (--dry-run says whether they do); repair would not\n", path)
		return
	}
	if isDir {
		fmt.Fprintf(w, "arksave repair %s recovers what is intact into a new generation (--dry-run shows what it would keep and drop)\n", path)
	} else {
		fmt.Fprintln(w, "the file is damaged; arksave repair on its save directory recovers what is intact")
	}
}

func printCheckJSON(w io.Writer, path string, r *savetool.CheckReport) error {
	return writeJSON(w, r.JSON(path))
}

// deniedOnly names the first problem that is a refused permission, not
// damage, with what to do, and reports whether every problem is one.
// pixelsOnly reports whether every problem is a chunk store of another
// pixel size than the game's: arksave migrate's to mend, not repair's.
func pixelsOnly(problems []chunkstore.Problem) bool {
	for _, p := range problems {
		if !errors.Is(p.Err, chunkstore.ErrConfigMismatch) {
			return false
		}
	}
	return len(problems) > 0
}

func deniedOnly(w io.Writer, problems []chunkstore.Problem) bool {
	denied := 0
	for _, p := range problems {
		if errors.Is(p.Err, fs.ErrPermission) {
			if denied == 0 {
				fmt.Fprintln(w, errs.DeniedHint(p.Err))
			}
			denied++
		}
	}
	return denied == len(problems)
}
