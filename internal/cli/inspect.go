package cli

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "inspect",
		args:    "[--json] [--key-file FILE] DIR|FILE",
		summary: "describe a save directory (generations, backups, chunk stores, bodies, the ECS world), a .pecs or a .pxsw file",
		run:     runInspect,
		flags:   func() *flag.FlagSet { return keyFileFlag(jsonFlags("inspect", new(bool)), new(string)) },
	})
}

func jsonFlags(name string, asJSON *bool) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.BoolVar(asJSON, "json", false, "print JSON")
	return fs
}

func runInspect(args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	var keyFile string
	path, err := pathArg(keyFileFlag(jsonFlags("inspect", &asJSON), &keyFile), args, anyPath)
	if err != nil {
		return err
	}
	key, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	if remote(path) {
		return inspectDir(path, key, asJSON, stdout, stderr)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &savetool.NotASaveError{Path: path, Reason: "it does not exist", Err: err}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	magic := make([]byte, 4)
	if !st.IsDir() {
		n, _ := io.ReadFull(f, magic)
		magic = magic[:n]
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	switch {
	case st.IsDir():
		return inspectDir(path, key, asJSON, stdout, stderr)
	case string(magic) == "PXSW" || strings.HasSuffix(path, ".pxsw"):
		// A store whose first header slot is damaged still opens from the other.
		return inspectStore(path, asJSON, stdout)
	case string(magic) != "PECS" && !strings.HasSuffix(path, ".pecs"):
		return &savetool.NotASaveError{Path: path, Reason: "it is neither a save directory nor a world file (.pecs, starting with PECS) or chunk store (.pxsw)"}
	case string(magic) != "PECS":
		return fmt.Errorf("%s does not start with PECS: it is not a world file, or its first bytes are damaged (arksave check on its save directory tells which)", path)
	}
	info, readErr := readInfoKeyed(bufio.NewReaderSize(f, 1<<16), key)
	if asJSON {
		if err := printInfoJSON(stdout, path, st.Size(), info, readErr); err != nil {
			return err
		}
	} else {
		printInfo(stdout, path, st.Size(), info, readErr)
	}
	if encryptedNote(stdout, path, asJSON, readErr) {
		return nil
	}
	if readErr != nil {
		reportReadError(stderr, "inspect", path, readErr)
		return errReported
	}
	return nil
}

func printInfo(w io.Writer, path string, size int64, info *pecs.Info, readErr error) {
	h := &info.Header
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "file\t%s (%d bytes)\n", path, size)
	if h.VersionMajor == 0 && readErr != nil {
		fmt.Fprintf(tw, "checksum\tFAILED: %v\n", readErr)
		tw.Flush()
		return
	}
	fmt.Fprintf(tw, "format\tPECS %d.%d, flags: %s\n", h.VersionMajor, h.VersionMinor, headerFlags(h.Flags))
	fmt.Fprintf(tw, "written\t%s\n", time.UnixMilli(h.Timestamp).UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(tw, "entities\t%d alive", h.Entities)
	if info.Pool.Slots > 0 {
		fmt.Fprintf(tw, ", %d free slots, pool of %d slots", info.Pool.Free, info.Pool.Slots)
	}
	fmt.Fprintf(tw, "\narchetypes\t%d tables\ntypes\t%d (%d resources)\n", h.Archetypes, h.Types, h.Resources)
	tw.Flush()

	if len(info.Types) > 0 {
		fmt.Fprintln(w, "\ntypes:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tVERSION\tENCODING\tSIZE\tFLAGS\tLAYOUT")
		for _, t := range info.Types {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%s\t%s\n", t.Name, t.Version, t.Encoding, t.Size, strings.Join(typeFlags(t.Flags), ","), t.Layout)
		}
		tw.Flush()
	}
	if len(info.Tables) > 0 {
		fmt.Fprintln(w, "\ntables:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tENTITIES\tBYTES\tRAW BYTES\tCOMPONENTS")
		for i, t := range info.Tables {
			comps := make([]string, len(t.Components))
			for j, c := range t.Components {
				comps[j] = shortName(c)
			}
			desc := strings.Join(comps, ", ")
			for _, r := range t.Relations {
				desc += fmt.Sprintf("; %s -> [%d,%d]", shortName(r.Component), r.Target.ID(), r.Target.Gen())
			}
			if desc == "" {
				desc = "(no components)"
			}
			fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%s\n", i, t.Entities, t.DataSize, t.RawSize, desc)
		}
		tw.Flush()
	}
	if len(info.Resources) > 0 {
		fmt.Fprintln(w, "\nresources:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tBYTES\tSTORED")
		for _, r := range info.Resources {
			fmt.Fprintf(tw, "  %s\t%d\t%d\n", r.Name, r.RawSize, r.StoredSize)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	switch {
	case errors.Is(readErr, archetype.ErrEncrypted):
		fmt.Fprintln(w, "checksum    ok as stored; the content is encrypted: give the save's key with --key-file FILE to read it")
	case readErr != nil:
		fmt.Fprintf(w, "checksum    FAILED: %v\n", readErr)
	default:
		fmt.Fprintf(w, "checksum    CRC32C %08x: ok\n", info.Checksum.Stored)
	}
}

// shortName drops the package path of a type name.
func shortName(name string) string {
	base := name
	if i := strings.IndexByte(name, '['); i >= 0 {
		base = name[:i]
	}
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func typeFlags(flags uint32) []string {
	var out []string
	for _, f := range []struct {
		flag uint32
		name string
	}{{archetype.TypeTransient, "transient"}, {archetype.TypeResource, "resource"}, {archetype.TypeZeroSized, "zero-sized"},
		{archetype.TypeRaw, "raw"}, {archetype.TypeRelation, "relation"}} {
		if flags&f.flag != 0 {
			out = append(out, f.name)
		}
	}
	if out == nil {
		out = []string{"-"}
	}
	return out
}

// infoJSON is the JSON form of inspect's output.
type infoJSON struct {
	File      string         `json:"file"`
	Size      int64          `json:"size"`
	Header    *pecs.Header   `json:"header"`
	Types     []typeJSON     `json:"types"`
	Tables    []tableJSON    `json:"tables"`
	Resources []resourceJSON `json:"resources"`
	Pool      pecs.PoolInfo  `json:"pool"`
	Checksum  checksumJSON   `json:"checksum"`
	Error     string         `json:"error,omitempty"`
}

type typeJSON struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Version  uint32   `json:"version"`
	Flags    []string `json:"flags"`
	Size     uint32   `json:"size"`
	Encoding string   `json:"encoding"`
	Layout   string   `json:"layout,omitempty"`
}

type tableJSON struct {
	ArchetypeID string               `json:"archetype_id"`
	Entities    uint32               `json:"entities"`
	Components  []string             `json:"components"`
	Relations   map[string][2]uint32 `json:"relations,omitempty"`
	DataOffset  uint64               `json:"data_offset"`
	DataSize    uint64               `json:"data_size"`
	RawSize     uint64               `json:"raw_size"`
}

type resourceJSON struct {
	Name       string `json:"name"`
	RawSize    uint64 `json:"raw_size"`
	StoredSize uint64 `json:"stored_size"`
}

type checksumJSON struct {
	Type     string `json:"type"`
	Stored   string `json:"stored"`
	Computed string `json:"computed"`
	OK       bool   `json:"ok"`
}

func printInfoJSON(w io.Writer, path string, size int64, info *pecs.Info, readErr error) error {
	return writeJSON(w, toInfoJSON(path, size, info, readErr))
}

func toInfoJSON(path string, size int64, info *pecs.Info, readErr error) infoJSON {
	out := infoJSON{File: path, Size: size, Header: &info.Header, Pool: info.Pool,
		Types: []typeJSON{}, Tables: []tableJSON{}, Resources: []resourceJSON{}}
	for _, t := range info.Types {
		out.Types = append(out.Types, typeJSON{ID: hex.EncodeToString(t.ID[:]), Name: t.Name, Version: t.Version,
			Flags: typeFlags(t.Flags), Size: t.Size, Encoding: t.Encoding, Layout: t.Layout})
	}
	for _, t := range info.Tables {
		tj := tableJSON{ArchetypeID: fmt.Sprintf("%016x", t.ArchetypeID), Entities: t.Entities, Components: t.Components,
			DataOffset: t.DataOffset, DataSize: t.DataSize, RawSize: t.RawSize}
		if tj.Components == nil {
			tj.Components = []string{}
		}
		for _, r := range t.Relations {
			if tj.Relations == nil {
				tj.Relations = map[string][2]uint32{}
			}
			tj.Relations[r.Component] = [2]uint32{r.Target.ID(), r.Target.Gen()}
		}
		out.Tables = append(out.Tables, tj)
	}
	for _, r := range info.Resources {
		out.Resources = append(out.Resources, resourceJSON{Name: r.Name, RawSize: r.RawSize, StoredSize: r.StoredSize})
	}
	out.Checksum = checksumJSON{Type: "crc32c", Stored: fmt.Sprintf("%08x", info.Checksum.Stored),
		Computed: fmt.Sprintf("%08x", info.Checksum.Computed), OK: info.Checksum.OK}
	if readErr != nil {
		out.Error = readErr.Error()
	}
	return out
}

// reportReadError says what is wrong with a file that could not be read, and what to do.
func reportReadError(w io.Writer, cmd, path string, err error) {
	switch {
	case errors.Is(err, archetype.ErrVersion):
		fmt.Fprintf(w, "arksave %s: %s: %v\n", cmd, path, err)
		fmt.Fprintln(w, "the file was written by a newer arksave; use that version")
	case errors.Is(err, archetype.ErrCorrupt):
		fmt.Fprintf(w, "arksave %s: %s is damaged: %v\n", cmd, path, err)
		fmt.Fprintln(w, "the file cannot be loaded as it is; restore it from a backup or an older save")
	default:
		fmt.Fprintf(w, "arksave %s: reading %s: %v\n", cmd, path, err)
	}
}
