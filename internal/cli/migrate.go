package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "migrate",
		args:    "[--dry-run] DIR",
		summary: "upgrade a save written in older format versions to the current ones, in place, as a new generation",
		run:     runMigrate,
		flags:   func() *flag.FlagSet { return migrateFlags(new(bool)) },
	})
}

func migrateFlags(dry *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.BoolVar(dry, "dry-run", false, "say what would be upgraded; write nothing")
	return fs
}

func runMigrate(args []string, stdout, stderr io.Writer) error {
	var dry bool
	dir, err := pathArg(migrateFlags(&dry), args, dirArg)
	if err != nil {
		return err
	}
	if dry {
		d, err := inspectLocation(dir, nil)
		if err != nil {
			return err
		}
		old := 0
		for _, g := range d.Generations {
			if g.FormatVersion < savedir.ManifestVersion {
				old++
				fmt.Fprintf(stdout, "generation %d: manifest format %d would become %d\n", g.Generation, g.FormatVersion, savedir.ManifestVersion)
			}
		}
		if n, err := dryRunPixels(dir, stdout); n > 0 || err != nil {
			if err != nil {
				fmt.Fprintln(stdout, "dry run: nothing was written")
				return err
			}
			old += n
		}
		if len(d.Stores) > 0 && d.Generations[0].Current {
			if st := d.Stores[0]; st.FormatVersion != 0 && st.FormatVersion < chunkstore.FormatVersion {
				old++
				fmt.Fprintf(stdout, "chunk store %s: PXSW %d would be written into a new store of format %d\n", st.Name, st.FormatVersion, chunkstore.FormatVersion)
			}
		}
		if old == 0 {
			fmt.Fprintf(stdout, "%s is at the current formats; nothing to do\n", dir)
		}
		fmt.Fprintln(stdout, "dry run: nothing was written")
		return nil
	}
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	r, err := savetool.Migrate(loc.Path, savetool.Options{FS: loc.FS})
	if err != nil {
		return err
	}
	current := fmt.Sprintf("manifest %d, world %s, chunk store PXSW %d", r.CurrentManifest, r.WorldVersion, r.StoreVersion)
	if r.NothingToDo {
		fmt.Fprintf(stdout, "%s is at the current formats (%s); nothing to do\n", dir, current)
		return nil
	}
	if r.Generation > 0 && r.From == r.To {
		fmt.Fprintf(stdout, "committed generation %d (the same world and chunks)\n", r.Generation)
	} else if r.Generation > 0 {
		fmt.Fprintf(stdout, "manifest format %d -> %d: committed generation %d (the same world and chunks, with the chunk store's root and data files)\n", r.From, r.To, r.Generation)
	}
	if r.PixelFrom != r.PixelTo {
		fmt.Fprintf(stdout, "chunk store: %d-byte pixels -> %d-byte: written into a new store; every stored value fits\n", r.PixelFrom, r.PixelTo)
	}
	if r.StoreFrom != r.StoreVersion {
		fmt.Fprintf(stdout, "chunk store PXSW %d -> %d: written into a new store of data files\n", r.StoreFrom, r.StoreVersion)
	}
	if len(r.BackupsUpgraded) > 0 {
		fmt.Fprintf(stdout, "backup manifests upgraded: %v\n", r.BackupsUpgraded)
	}
	fmt.Fprintf(stdout, "%s is at the current formats (%s)\n", dir, current)
	return nil
}

// dryRunPixels says what a migration would do with the pixel size of the
// save at dir and returns 1 when it would change it; the error is the one
// the migration would return when a value does not fit. Other errors (a
// damaged save) are left to the rest of the dry run and to migrate.
func dryRunPixels(dir string, stdout io.Writer) (int, error) {
	from, err := savetool.PixelMigration(dir, savetool.Options{})
	switch {
	case from == 4 && err == nil:
		return 0, nil
	case err != nil && errors.Is(err, chunkstore.ErrConfigMismatch):
		fmt.Fprintf(stdout, "%v; migrate would write nothing\n", err)
		return 0, err
	case err != nil:
		return 0, nil // damage and the like: migrate itself says so
	}
	fmt.Fprintf(stdout, "chunk store: %d-byte pixels would become 4-byte; every stored value fits\n", from)
	return 1, nil
}
