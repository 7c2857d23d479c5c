package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/words"
)

// inspectLocation opens the save at location (a directory or a registered
// scheme) and describes it.
func inspectLocation(location string, key []byte) (*savetool.DirInfo, error) {
	loc, err := openLocation(location)
	if err != nil {
		return nil, err
	}
	defer loc.Close()
	return savetool.InspectDir(loc.Path, savetool.Options{FS: loc.FS, Key: key})
}

// inspectDir describes a save directory.
func inspectDir(path string, key []byte, asJSON bool, stdout, stderr io.Writer) error {
	d, err := inspectLocation(path, key)
	if err != nil {
		return err
	}
	if asJSON {
		out := struct {
			*savetool.DirInfo
			World *infoJSON `json:"world,omitempty"`
		}{DirInfo: d}
		if d.World != nil {
			var werr error
			if d.WorldError != "" {
				werr = errors.New(d.WorldError)
			}
			wj := toInfoJSON(d.WorldFile, 0, d.World, werr)
			out.World = &wj
		}
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		printDirInfo(stdout, d)
	}
	damaged := d.ManifestError != "" || d.WorldError != ""
	for _, st := range d.Stores {
		damaged = damaged || st.Error != ""
	}
	switch {
	case d.Denied != "":
		fmt.Fprintf(stderr, "arksave inspect: %s cannot be read whole: permission denied on %s\n%s\n", path, d.Denied,
			errs.DeniedHint(&fs.PathError{Op: "open", Path: d.Denied, Err: fs.ErrPermission}))
		return errReported
	case damaged:
		fmt.Fprintf(stderr, "arksave inspect: %s is damaged; arksave check %s lists what, arksave repair %s mends it\n", path, path, path)
		return errReported
	}
	return nil
}

func printDirInfo(w io.Writer, d *savetool.DirInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "save\t%s (%s)\n", d.Path, bytesStr(d.Bytes))
	if d.ManifestError != "" {
		fmt.Fprintf(tw, "manifest\t%s: %s\n", state(d.ManifestError), d.ManifestError)
	}
	tw.Flush()
	if len(d.Generations) > 0 {
		fmt.Fprintln(w, "\ngenerations:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  GEN\t\tFORMAT\tSAVED\tWORLD\tCHUNK STORE\tSTORE GEN\tCHUNKS")
		for _, g := range d.Generations {
			state := "backup"
			if g.Current {
				state = "current"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\t%s (%s)\t%s\t%d\t%d\n", g.Generation, state, g.FormatVersion,
				g.Modified.Format("2006-01-02 15:04:05"), g.World, bytesStr(g.WorldBytes), g.Store, g.StoreGeneration, g.Chunks)
		}
		tw.Flush()
	}
	if h := d.History; h != nil && h.Generations > 0 {
		fmt.Fprintf(w, "\nhistory: %s\n", historyStr(h))
	}
	for _, st := range d.Stores {
		fmt.Fprintf(w, "\nchunk store %s:\n", st.Name)
		printStoreInfo(w, &st)
	}
	switch {
	case d.PlayersError != "":
		fmt.Fprintf(w, "\nplayers %s: %s: %s\n", d.PlayersIndex, state(d.PlayersError), d.PlayersError)
	case d.PlayersIndex != "":
		fmt.Fprintf(w, "\nplayers %s (records in %s): %d: %s\n", d.PlayersIndex, d.PlayersData, len(d.Players), strings.Join(d.Players, ", "))
	}
	if d.World != nil {
		fmt.Fprintf(w, "\nECS world %s:\n", d.WorldFile)
		var err error
		if d.WorldError != "" {
			err = errors.New(d.WorldError)
		}
		if d.WorldEncrypted {
			err = archetype.ErrEncrypted
		}
		printInfo(&indent{w: w, bol: true}, filepath.Join(d.Path, d.WorldFile), d.Generations[0].WorldBytes, d.World, err)
	} else if d.WorldError != "" {
		fmt.Fprintf(w, "\nECS world %s: %s: %s\n", d.WorldFile, state(d.WorldError), d.WorldError)
	}
}

// historyStr says what the older generations cost: how many, saved when,
// the data files only they use and their world files.
func historyStr(h *savetool.HistoryInfo) string {
	const at = "2006-01-02 15:04:05"
	out := fmt.Sprintf("%s saved %s to %s; %s (%s) only they use, %s of their world files",
		words.Count(h.Generations, "older generation", "older generations"), h.Oldest.Format(at), h.Newest.Format(at),
		words.Count(h.DataFiles, "store or players file", "store and players files"), bytesStr(h.DataBytes), bytesStr(h.WorldBytes))
	if h.Unknown > 0 {
		out += fmt.Sprintf(" (%s of an older format name no data files: not counted)", words.Count(h.Unknown, "generation", "generations"))
	}
	return out
}

func printStoreInfo(w io.Writer, st *savetool.StoreInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if st.Error != "" && st.FileBytes == 0 {
		fmt.Fprintf(tw, "  %s\t%s\n", state(st.Error), st.Error)
		tw.Flush()
		return
	}
	fmt.Fprintf(tw, "  generation\t%d\n", st.Generation)
	fmt.Fprintf(tw, "  game\tchunks of %d px, tiles of %d px, seed %d, generator version %d\n", st.ChunkSize, st.TileSize, st.Seed, st.GeneratorVersion)
	if st.Axes > 2 {
		fmt.Fprintf(tw, "  keys\t%d axes (%s)\n", st.Axes, []string{"", "", "", "x, y, z", "x, y, z, w"}[min(st.Axes, 4)])
	}
	fmt.Fprintf(tw, "  chunks\t%d stored: %d full, %d delta, %d empty, %d palette\n", st.Chunks, st.Full, st.Delta, st.Empty, st.Palette)
	fmt.Fprintf(tw, "  bodies\t%s\n", bodiesStr(st))
	if st.Sections > 0 {
		fmt.Fprintf(tw, "  entities\t%d regional in %d entity sections\n", st.Entities, st.Sections)
	}
	if st.EncryptedRecords > 0 {
		fmt.Fprintf(tw, "  encrypted\t%s with the save's key (Plugin.Key; the tools read them with --key-file FILE)\n",
			words.Count(st.EncryptedRecords, "chunk record", "chunk records"))
	}
	fmt.Fprintf(tw, "  bytes\t%s: records %s, page table %s (%d journal segments), dead %s (%.1f%%)\n",
		bytesStr(st.FileBytes), bytesStr(st.RecordBytes), bytesStr(st.TableBytes), st.JournalSegments, bytesStr(st.DeadBytes), 100*st.DeadRatio)
	if len(st.DataFiles) > 0 {
		var parts []string
		for _, f := range st.DataFiles {
			part := fmt.Sprintf("%s %s (%s dead)", f.Name, bytesStr(f.Bytes), bytesStr(f.Dead))
			if f.Error != "" {
				part = fmt.Sprintf("%s %s: %s", f.Name, state(f.Error), f.Error)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(tw, "  data files\t%s\n", strings.Join(parts, ", "))
	}
	if st.FormatVersion != 0 && st.FormatVersion < chunkstore.FormatVersion {
		fmt.Fprintf(tw, "  format\tPXSW %d; arksave migrate rewrites it in format %d\n", st.FormatVersion, chunkstore.FormatVersion)
	}
	if st.Error != "" {
		fmt.Fprintf(tw, "  %s\t%s\n", state(st.Error), st.Error)
	}
	tw.Flush()
}

// inspectStore describes a lone chunk store file.
func inspectStore(path string, asJSON bool, stdout io.Writer) error {
	st, err := savetool.InspectStore(path, savetool.Options{})
	if err != nil {
		return fmt.Errorf("%w; arksave check %s lists the damage", err, path)
	}
	if asJSON {
		return writeJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "chunk store %s:\n", path)
	printStoreInfo(stdout, st)
	if st.Error != "" {
		return errReported
	}
	return nil
}

// indent prefixes every line written with two spaces.
type indent struct {
	w   io.Writer
	bol bool // at the beginning of a line
}

func (in *indent) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if in.bol && c != '\n' {
			b.WriteString("  ")
		}
		b.WriteRune(c)
		in.bol = c == '\n'
	}
	_, err := io.WriteString(in.w, b.String())
	return len(p), err
}

func bytesStr(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// bodiesStr says how many pixel bodies a store holds and in how many
// chunks: "none" when it holds none (its entity blocks may hold regional
// entities only).
func bodiesStr(st *savetool.StoreInfo) string {
	if st.Bodies == 0 {
		return "none"
	}
	return fmt.Sprintf("%d in %s", st.Bodies, words.Count(st.BodyChunks, "chunk", "chunks"))
}

// state labels a part of the save that does not read: UNREADABLE when the
// file system refused permission (a problem of the user's rights, not of
// the save), else DAMAGED.
func state(msg string) string {
	if strings.Contains(msg, fs.ErrPermission.Error()) {
		return "UNREADABLE"
	}
	return "DAMAGED"
}
