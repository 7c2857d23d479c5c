package savetool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
)

// ImportReport says what [ImportJSON] and [ImportInto] did.
type ImportReport struct {
	// From is the generation a save directory's export was taken from; 0
	// for the export of a world file.
	From uint64
	// Entities and Bytes describe the world file written.
	Entities uint64
	Bytes    int
	// Generation is the generation ImportInto committed, Previous the one
	// that was current and is a backup now; 0 for ImportJSON.
	Generation, Previous uint64

	created int64 // the exported save's creation time, from its manifest
}

// ImportOptions are the options of [ImportInto].
type ImportOptions struct {
	Options
	// AnyGeneration imports a save directory's export of another
	// generation than the committed one: its world then joins the chunk
	// store of the committed generation.
	AnyGeneration bool
}

// ImportJSON reads JSON written by [ExportJSON] (a save directory's: its
// "world" is taken) or by archetype.ExportJSON (a world file's), and
// writes the world it holds to w as a PECS world file: byte for byte the
// file that was exported, unless the JSON was edited (see
// archetype.ImportJSON). Bad JSON is archetype.ErrBadJSON, naming the JSON
// path and offset.
func ImportJSON(w io.Writer, r io.Reader) (*ImportReport, error) {
	file, rep, err := importWorld(r)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(file); err != nil {
		return nil, err
	}
	return rep, nil
}

// ImportInto reads JSON as [ImportJSON] does and commits its world as a new
// generation of the save directory at dir, with the chunk store generation
// of the committed one, through the save's commit protocol (world file,
// then the manifest); the generation that was current becomes a backup,
// and every backup stays. A save directory's export of another generation
// is refused (ErrOtherGeneration) unless o.AnyGeneration: the game may have
// saved since the export, and its world would lose that. It takes the
// directory's lock: while a game holds it, it fails with ErrInUse naming
// the game (whose next save would otherwise overwrite the import).
func ImportInto(dir string, r io.Reader, o ImportOptions) (*ImportReport, error) {
	file, rep, err := importWorld(r)
	if err != nil {
		return nil, err
	}
	d, err := openLocked(o.fs(), dir, savedir.OpenDir)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer d.Close()
	m := d.Manifest()
	if m == nil {
		return nil, fmt.Errorf("%w: %s holds no committed save to import into; arksave repair mends a damaged one", autosave.ErrNoSave, dir)
	}
	if rep.From != 0 && !o.AnyGeneration {
		if rep.From != m.Generation {
			return nil, fmt.Errorf("%w: the JSON holds generation %d, %s is at generation %d; export it again, or import anyway (its world then joins the chunks of generation %d)",
				ErrOtherGeneration, rep.From, dir, m.Generation, m.Generation)
		}
		if rep.created != m.CreatedMS {
			return nil, fmt.Errorf("%w: the JSON holds generation %d of a save created at %s, %s was created at %s; import anyway only if it is the same save",
				ErrOtherGeneration, rep.From, time.UnixMilli(rep.created).UTC().Format(time.RFC3339), dir, time.UnixMilli(m.CreatedMS).UTC().Format(time.RFC3339))
		}
	}
	ref, s, err := keptStoreRef(d, m, o.fs())
	if err != nil {
		return nil, fmt.Errorf("import: store generation %d: %w", m.Chunks.Generation, err)
	}
	s.Close()
	rep.Previous = m.Generation
	nm, _, err := d.Commit(savedir.Commit{World: file, Chunks: ref, Players: m.Players, MaxBackups: len(d.Backups()) + 1})
	if err != nil {
		return nil, fmt.Errorf("import: commit: %w", err)
	}
	rep.Generation = nm.Generation
	return rep, nil
}

// importWorld turns either kind of export into a world file.
func importWorld(r io.Reader) ([]byte, *ImportReport, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	rep := &ImportReport{}
	world, at, err := dirExportWorld(data, rep)
	if err != nil {
		return nil, nil, err
	}
	var file bytes.Buffer
	if err := archetype.ImportJSON(&file, bytes.NewReader(world)); err != nil {
		if at > 0 {
			return nil, nil, fmt.Errorf("in \"world\" (offsets count from its start, byte %d of the input): %w", at, err)
		}
		return nil, nil, err
	}
	info, err := pecs.ReadInfo(bytes.NewReader(file.Bytes()))
	if err != nil {
		return nil, nil, err
	}
	rep.Entities, rep.Bytes = info.Header.Entities, file.Len()
	return file.Bytes(), rep, nil
}

// dirExportWorld returns the world's JSON of a save directory's export and
// its offset, with the generation in rep; JSON of a world file comes back
// whole, at offset 0.
func dirExportWorld(data []byte, rep *ImportReport) ([]byte, int64, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return data, 0, nil // not an object: archetype.ImportJSON says what is wrong
	}
	var world json.RawMessage
	var at int64
	var gen *uint64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return data, 0, nil
		}
		key, _ := tok.(string)
		switch key {
		case "format", "types":
			return data, 0, nil // a world file's export
		case "world":
			at = dec.InputOffset()
			err = dec.Decode(&world)
		case "generation":
			err = dec.Decode(&gen)
		case "manifest":
			var m struct {
				CreatedMS int64 `json:"created_ms"`
			}
			err = dec.Decode(&m)
			rep.created = m.CreatedMS
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %q at offset %d: %v", archetype.ErrBadJSON, key, dec.InputOffset(), err)
		}
	}
	if world == nil {
		return nil, 0, fmt.Errorf("%w: neither a save directory's export (it has \"world\") nor a world file's (it has \"format\")", archetype.ErrBadJSON)
	}
	if gen == nil || *gen == 0 {
		return nil, 0, fmt.Errorf("%w: a save directory's export without its \"generation\"", archetype.ErrBadJSON)
	}
	rep.From = *gen
	// The world value starts after the white space and colon that follow its key.
	for at < int64(len(data)) && (data[at] == ':' || data[at] == ' ' || data[at] == '\n' || data[at] == '\t' || data[at] == '\r') {
		at++
	}
	return world, at, nil
}
