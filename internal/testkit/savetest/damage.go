package savetest

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
)

// Chunks of the save Build makes, by what they are.
var (
	FullChunk  = chunkstore.Pos{X: -1, Y: -1} // Full, written by the last generation
	DeltaChunk = chunkstore.Pos{X: 1, Y: 1}   // Delta, written by the last generation; holds a body
)

// Layout is where things are in a save's chunk store.
type Layout struct {
	Store   string   // path of the committed generation's store file
	Data    []string // paths of the data files it uses
	Table   int64    // store offset (storetool.Handle) of the committed generation's page-table root record
	Records map[string]storetool.Handle
	Backups map[uint64]map[string]storetool.Handle // the records of each backup generation
}

// Locate returns the path of the file of the store that holds store offset
// off, and the offset within that file.
func (l *Layout) Locate(off int64) (string, int64) {
	h := storetool.Handle{Offset: off}
	if h.File() == 0 {
		return l.Store, off
	}
	return storetool.Tool.DataFileName(l.Store, h.File()), h.FileOffset()
}

// Flip inverts four bits of the byte at store offset off of the store.
func (l *Layout) Flip(off int64) error {
	path, at := l.Locate(off)
	return Flip(path, at)
}

// FileOf returns the base name of the file of the store that holds store
// offset off.
func (l *Layout) FileOf(off int64) string {
	path, _ := l.Locate(off)
	return filepath.Base(path)
}

// RecordKey names a record in Layout.Records: "(x, y)/type".
func RecordKey(p chunkstore.Pos, t chunkstore.StorageType) string { return fmt.Sprintf("%v/%v", p, t) }

// LayoutOf reads where the records of the save in dir are.
func LayoutOf(dir string) (*Layout, error) {
	d, m, err := committed(dir)
	if err != nil {
		return nil, err
	}
	ri, err := storetool.Tool.ParseRoot(m.Chunks.Root)
	if err != nil {
		return nil, err
	}
	store, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	l := &Layout{Store: store, Table: ri.Table, Backups: map[uint64]map[string]storetool.Handle{}}
	for _, n := range m.Chunks.Data {
		p, err := d.File(n)
		if err != nil {
			return nil, err
		}
		l.Data = append(l.Data, p)
	}
	open := func(m *savedir.Manifest) (map[string]storetool.Handle, error) {
		p, err := d.File(m.Chunks.Name)
		if err != nil {
			return nil, err
		}
		s, err := chunkstore.Open(p, &chunkstore.Options{ReadOnly: true, Root: m.Chunks.Root})
		if err != nil {
			return nil, err
		}
		defer s.Close()
		out := map[string]storetool.Handle{}
		storetool.Tool.Entries(s, func(e storetool.Entry) bool {
			out[RecordKey(e.Pos, e.Type)] = e.Handle
			return true
		})
		return out, nil
	}
	if l.Records, err = open(m); err != nil {
		return nil, err
	}
	for _, b := range d.Backups() {
		if l.Backups[b.Generation], err = open(b); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Record returns the record of chunk p of type t in the committed
// generation.
func (l *Layout) Record(p chunkstore.Pos, t chunkstore.StorageType) (storetool.Handle, error) {
	h, ok := l.Records[RecordKey(p, t)]
	if !ok || h.IsZero() {
		return h, fmt.Errorf("savetest: no %v record of chunk %v", t, p)
	}
	return h, nil
}

// Flip inverts four bits of the byte at off of the file at path.
func Flip(path string, off int64) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if off >= int64(len(data)) {
		return fmt.Errorf("savetest: offset %d past %s's %d bytes", off, path, len(data))
	}
	data[off] ^= 0x5a
	return os.WriteFile(path, data, 0o644)
}

// FlipMiddle inverts four bits of the byte in the middle of the file at
// path.
func FlipMiddle(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return Flip(path, st.Size()/2)
}

// Damage is one way a save gets damaged, named after its defect, with what
// a check must name and what a repair may lose.
//
// LostFrom returns the chunks a repair may lose: Lost, or with LostAll
// every chunk and body set want holds.
type Damage struct {
	Name  string
	Apply func(dir string, l *Layout) error
	// Files that check must name.
	Files []string
	// Lost are the chunks (and their bodies) a repair may lose or revert;
	// all others read back exactly.
	Lost []chunkstore.Pos
	// LostAll: every chunk and body set may be lost (the data file that
	// holds them is gone).
	LostAll bool
	// Score is the Score resource the repaired save loads: 3 for the
	// committed generation's world, 2 for the backup's.
	Score int
	// Backups is how many backups at least survive the repair.
	Backups int
	// Is is the error every problem check reports matches with errors.Is.
	Is error
}

// LostFrom returns the positions a repair of d may lose, of the contents
// want of the undamaged save.
func (d Damage) LostFrom(want *Contents) []chunkstore.Pos {
	if !d.LostAll {
		return d.Lost
	}
	var out []chunkstore.Pos
	for p := range want.Chunks {
		out = append(out, p)
	}
	for p := range want.Bodies {
		out = append(out, p)
	}
	return out
}

func flipIn(name string, off int64) func(string, *Layout) error {
	return func(dir string, _ *Layout) error { return Flip(filepath.Join(dir, name), off) }
}

func remove(names ...string) func(string, *Layout) error {
	return func(dir string, _ *Layout) error {
		for _, n := range names {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
		return nil
	}
}

func truncateTo(name string, size int64) func(string, *Layout) error {
	return func(dir string, _ *Layout) error { return os.Truncate(filepath.Join(dir, name), size) }
}

// flipStore flips a byte at each store offset (in the store file or a data
// file).
func flipStore(offs ...func(*Layout) (int64, error)) func(string, *Layout) error {
	return func(_ string, l *Layout) error {
		for _, off := range offs {
			o, err := off(l)
			if err == nil {
				err = l.Flip(o)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// truncateStoreAt cuts the file of the store that holds store offset off
// there.
func truncateStoreAt(off func(*Layout) (int64, error)) func(string, *Layout) error {
	return func(_ string, l *Layout) error {
		o, err := off(l)
		if err != nil {
			return err
		}
		path, at := l.Locate(o)
		return os.Truncate(path, at)
	}
}

func at(off int64) func(*Layout) (int64, error) {
	return func(*Layout) (int64, error) { return off, nil }
}

func inRecord(p chunkstore.Pos, t chunkstore.StorageType, delta int64) func(*Layout) (int64, error) {
	return func(l *Layout) (int64, error) {
		h, err := l.Record(p, t)
		return h.Offset + delta, err
	}
}

// DataFile1 is the data file that holds the records of the save Build
// makes.
const DataFile1 = "chunks-data-1.pxsd"

// Damages are the damage cases of the save Build makes: flipped bytes in
// the manifest, a world file, the store's header slots, page table and
// records; truncated files; deleted files.
var Damages = []Damage{
	{Name: "flipped-manifest", Is: autosave.ErrCorrupt, Files: []string{"manifest"}, Score: 3, Backups: 2, Apply: flipIn("manifest", 40)},
	{Name: "deleted-manifest", Is: autosave.ErrCorrupt, Files: []string{"manifest"}, Score: 3, Backups: 2, Apply: remove("manifest")},
	{Name: "truncated-manifest", Is: autosave.ErrCorrupt, Files: []string{"manifest"}, Score: 3, Backups: 2, Apply: truncateTo("manifest", 50)},
	{Name: "flipped-world", Is: autosave.ErrCorrupt, Files: []string{"world-3.pecs"}, Score: 2, Backups: 2, Apply: flipIn("world-3.pecs", 100)},
	{Name: "deleted-world", Is: autosave.ErrCorrupt, Files: []string{"world-3.pecs"}, Score: 2, Backups: 2, Apply: remove("world-3.pecs")},
	{Name: "truncated-world", Is: autosave.ErrCorrupt, Files: []string{"world-3.pecs"}, Score: 2, Backups: 2, Apply: truncateTo("world-3.pecs", 300)},
	{Name: "flipped-header-slot-a", Is: chunkstore.ErrCorrupt, Files: []string{"chunks.pxsw"}, Score: 3, Backups: 2, Apply: flipStore(at(12))},
	{Name: "flipped-header-slots", Is: chunkstore.ErrCorrupt, Files: []string{"chunks.pxsw"}, Score: 3, Backups: 2, Apply: flipStore(at(12), at(64+20))},
	{Name: "flipped-page-table", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 2,
		Apply: flipStore(func(l *Layout) (int64, error) { return l.Table + 40, nil })},
	{Name: "flipped-full-record", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 2, Lost: []chunkstore.Pos{FullChunk},
		Apply: flipStore(inRecord(FullChunk, chunkstore.Full, 40))},
	{Name: "flipped-delta-record", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 2, Lost: []chunkstore.Pos{DeltaChunk},
		Apply: flipStore(inRecord(DeltaChunk, chunkstore.Delta, 30))},
	{Name: "flipped-record-header", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 2, Lost: []chunkstore.Pos{DeltaChunk},
		Apply: flipStore(inRecord(DeltaChunk, chunkstore.Delta, 2))},
	// The body block is shared by every generation: the backups lose it too.
	{Name: "flipped-body-record", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Lost: []chunkstore.Pos{DeltaChunk},
		Apply: flipStore(inRecord(DeltaChunk, chunkstore.BodyBlock, 70))},
	// An older record, still used by the first backup: it loses it, the
	// committed generation does not.
	{Name: "flipped-backup-record", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 1,
		Apply: flipStore(func(l *Layout) (int64, error) {
			old := l.Backups[1][RecordKey(chunkstore.Pos{}, chunkstore.Delta)]
			if cur, _ := l.Record(chunkstore.Pos{}, chunkstore.Delta); old == cur || old.IsZero() {
				return 0, fmt.Errorf("savetest: chunk (0, 0) was not rewritten since generation 1")
			}
			return old.Offset + 30, nil
		})},
	// The data file ends inside the committed generation's page table.
	{Name: "truncated-store-table", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, Backups: 2,
		Apply: truncateStoreAt(func(l *Layout) (int64, error) { return l.Table + 30, nil })},
	// The data file ends inside the last generation's first record: its page
	// table and every record after the cut are gone, and nothing left says
	// which chunks they held. The repair lists every chunk it cannot show
	// to be the last generation's as possibly reverted.
	{Name: "truncated-store-record", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3,
		Lost: []chunkstore.Pos{FullChunk, DeltaChunk, {X: 0, Y: 0}, {X: 1, Y: 0}, {X: -1, Y: 1}, {X: 0, Y: 1}},
		Apply: truncateStoreAt(func(l *Layout) (int64, error) {
			h, err := l.Record(FullChunk, chunkstore.Full)
			return h.Offset + 50, err
		})},
	// The data file is gone: every generation's chunks and bodies with it.
	// The repaired save regenerates them; the backups, whose chunks were
	// there too, go.
	{Name: "deleted-data-file", Is: chunkstore.ErrCorrupt, Files: []string{DataFile1}, Score: 3, LostAll: true,
		Apply: remove(DataFile1)},
	{Name: "flipped-backup-world", Is: autosave.ErrCorrupt, Files: []string{"backups/world-1.pecs"}, Score: 3, Backups: 1, Apply: flipIn("backups/world-1.pecs", 90)},
	{Name: "flipped-backup-manifest", Is: autosave.ErrCorrupt, Files: []string{"backups/manifest-2"}, Score: 3, Backups: 1, Apply: flipIn("backups/manifest-2", 60)},
	{Name: "deleted-manifest-and-world", Is: autosave.ErrCorrupt, Files: []string{"manifest"}, Score: 2, Backups: 2, Apply: remove("manifest", "world-3.pecs")},
	{Name: "deleted-manifest-flipped-slots", Files: []string{"manifest", "chunks.pxsw"}, Score: 3, Backups: 2,
		Apply: func(dir string, l *Layout) error {
			if err := remove("manifest")(dir, l); err != nil {
				return err
			}
			return flipStore(at(12), at(64+20))(dir, l)
		}},
}
