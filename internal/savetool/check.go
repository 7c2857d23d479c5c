package savetool

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// CheckReport is the result of [Check]: every problem found, not only the
// first, and what was looked at.
type CheckReport struct {
	Manifest *savedir.Manifest    // nil when there is none or it is unreadable
	Problems []chunkstore.Problem // File is relative to the save directory (the file's own name for a file)
	Backups  int                  // backup generations checked
	Stores   int                  // chunk store generations checked
	Worlds   int                  // world files checked
	Players  int                  // players indexes checked (each with every record it names)
	Mirrors  int                  // mirrors in backups/ checked (savedir.MirrorName)
	// Types counts the chunk store entries of the current generation (or
	// of the store file checked) by storage type.
	Types map[chunkstore.StorageType]int
	// Zstd counts the live records of the current generation's chunk
	// store (or of the store file checked) stored as zstd: archived by a
	// compaction (arksave compact --zstd, Plugin.ArchiveZstd).
	Zstd int
	// Encrypted counts the encrypted PECS files (world files, players'
	// records) checked without the key: their checksums as stored match,
	// their content was not read. Not a problem.
	Encrypted int
	// WrongKey counts the encrypted files Options.Key does not open (intact
	// as stored): the key is not this save's. Not damage either.
	WrongKey int
	// EncryptedRecords counts the encrypted chunk and body records
	// (Plugin.Key) checked without the key, over every store generation
	// checked: their checksums as stored match, their content was not
	// decoded. Not a problem. WrongKeyRecords counts those that
	// Options.Key does not open.
	EncryptedRecords, WrongKeyRecords int

	cryptKey []byte // Options.Key
}

// OK reports whether no problem was found.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// CheckJSON is a [CheckReport] as JSON: what arksave check --json prints.
type CheckJSON struct {
	Path       string        `json:"path"`
	OK         bool          `json:"ok"`
	Generation uint64        `json:"generation,omitempty"` // of the manifest, when there is one
	Problems   []ProblemJSON `json:"problems"`
	Backups    int           `json:"backups_checked"`
	Stores     int           `json:"store_generations_checked"`
	Worlds     int           `json:"world_files_checked"`
	Players    int           `json:"players_indexes_checked,omitempty"` // each with every record it names
	Mirrors    int           `json:"mirrors_checked,omitempty"`         // the redundant copies in backups/
	Encrypted  int           `json:"encrypted_not_read,omitempty"`      // encrypted files checked as stored, without the key
	WrongKey   int           `json:"wrong_key,omitempty"`               // encrypted files the key given does not open
	// EncryptedRecords and WrongKeyRecords are CheckReport's: encrypted
	// chunk records checked as stored, and those the key does not open.
	EncryptedRecords int `json:"encrypted_records_not_read,omitempty"`
	WrongKeyRecords  int `json:"wrong_key_records,omitempty"`
	// Types counts the chunk store entries by storage type (CheckReport.Types).
	Types map[string]int `json:"entries_by_type,omitempty"`
	Zstd  int            `json:"zstd_records,omitempty"` // CheckReport.Zstd
}

// ProblemJSON is one problem of a [CheckJSON].
type ProblemJSON struct {
	File   string    `json:"file"`
	Offset *int64    `json:"offset,omitempty"`
	Chunk  *[2]int32 `json:"chunk,omitempty"` // a chunk of a store of 2 axes: x, y
	Key    []int32   `json:"key,omitempty"`   // a chunk of a store of 3 or 4 axes: x, y, z(, w)
	Error  string    `json:"error"`
}

// JSON returns the report as JSON values, for the check of path.
func (r *CheckReport) JSON(path string) CheckJSON {
	out := CheckJSON{Path: path, OK: r.OK(), Problems: []ProblemJSON{}, Backups: r.Backups, Stores: r.Stores, Worlds: r.Worlds, Players: r.Players, Mirrors: r.Mirrors,
		Encrypted: r.Encrypted, WrongKey: r.WrongKey, EncryptedRecords: r.EncryptedRecords, WrongKeyRecords: r.WrongKeyRecords, Zstd: r.Zstd}
	for t, n := range r.Types {
		if out.Types == nil {
			out.Types = map[string]int{}
		}
		out.Types[t.String()] = n
	}
	if r.Manifest != nil {
		out.Generation = r.Manifest.Generation
	}
	for _, p := range r.Problems {
		pj := ProblemJSON{File: p.File, Error: p.Err.Error()}
		if p.Offset >= 0 {
			off := p.Offset
			pj.Offset = &off
		}
		switch {
		case p.Key != nil && p.Key.Axes() > 2:
			for i := range p.Key.Axes() {
				pj.Key = append(pj.Key, p.Key.Axis(i))
			}
		case p.Pos != nil:
			pj.Chunk = &[2]int32{p.Pos.X, p.Pos.Y}
		}
		out.Problems = append(out.Problems, pj)
	}
	return out
}

func (r *CheckReport) add(file string, off int64, err error) {
	r.Problems = append(r.Problems, chunkstore.Problem{File: file, Offset: off, Err: err})
}

// Check verifies a save directory, a PECS world file (.pecs) or a chunk
// store file (.pxsw) without the game: every checksum and every reference
// between the files. It collects every problem.
//
// For a save directory: the manifest's own checksum; the world file's size
// and CRC32-C and every checksum and value inside the PECS file; the chunk
// store generation the manifest names (opened through its root, read-only,
// every record decoded: [chunkstore.Store.Check]); and the same for every
// backup, damaged backup manifests included. When the manifest is missing
// or damaged, that is a problem (a lost manifest is repairable: [Repair]),
// and the files it would name are checked on their own: every chunk store
// and world file of the directory.
//
// The error is for a path that cannot be checked at all: missing, a file
// of another kind, or a directory that holds none of a save's files (an
// error matching autosave.ErrNoSave: it is not a save, rather than a
// damaged one).
//
// It takes no lock and changes nothing, so it runs while a game saves into
// the directory: a check that finds problems runs again until two checks in
// a row see the same manifest and the same problems, so that a file a
// concurrent commit has just moved, or a header slot it is writing, is not
// reported as damage.
func Check(path string, o Options) (*CheckReport, error) {
	t, fsys := newTracker(o)
	st, err := fsys.Stat(path)
	if err != nil {
		return nil, pathError(path, err)
	}
	if st.IsDir() {
		if _, err := openSave(fsys, path); err != nil {
			return nil, err
		}
		t.begin("checking "+filepath.Base(path), checkEstimate(fsys, path))
		defer t.end()
		return checkDirKey(fsys, path, o.Key), nil
	}
	r := &CheckReport{cryptKey: o.Key}
	name := filepath.Base(path)
	t.begin("checking "+name, 2*st.Size())
	defer t.end()
	switch {
	case strings.HasSuffix(path, ".pecs"):
		r.Worlds++
		data, err := vfs.ReadFile(fsys, path)
		if err == nil {
			err = r.readInfo(data)
		}
		if err != nil {
			r.add(name, -1, err)
		}
	case strings.HasSuffix(path, ".pxsw"):
		rep := storetool.Tool.CheckFile(fsys, path, o.Key)
		if rep.Slots > 0 {
			r.Stores++
			r.Types, r.Zstd = rep.Types, rep.Zstd
		}
		r.EncryptedRecords, r.WrongKeyRecords = rep.Encrypted, rep.WrongKey
		addStoreProblems(r, name, "", rep.Problems)
	case strings.HasSuffix(path, ".pxsd"):
		// A data file on its own: every record in it checks out.
		err := storetool.Tool.Scan(fsys, path, func(rec storetool.ScanRecord) bool {
			if rec.Err != nil {
				p := chunkstore.Problem{File: name, Section: chunkstore.SectionRecord, Offset: rec.Handle.FileOffset(), Err: rec.Err}
				if rec.Kind != 0 && rec.Kind != storetool.RecordJournal && rec.Kind != storetool.RecordCheckpoint {
					pos, key := rec.Pos, rec.Key
					p.Pos, p.Key = &pos, &key
				}
				r.Problems = append(r.Problems, p)
			}
			return true
		})
		if err != nil {
			r.add(name, -1, err)
		}
	default:
		return nil, &NotASaveError{Path: path, Reason: "it is neither a save directory nor a world file (.pecs), a chunk store (.pxsw) or one of its data files (.pxsd)"}
	}
	return r, nil
}

// consistentTries bounds how often a check starts over because a writer
// moved on under it.
const consistentTries = 8

// checkDir checks a save directory until two checks in a row agree.
func checkDir(fsys vfs.FS, dir string) *CheckReport { return checkDirKey(fsys, dir, nil) }

// checkDirKey is checkDir with the save's key (nil: none).
func checkDirKey(fsys vfs.FS, dir string, cryptKey []byte) *CheckReport {
	var last *CheckReport
	var lastKey string
	for range consistentTries {
		r, d := checkOnce(fsys, dir, cryptKey)
		if r.OK() || d == nil {
			return r
		}
		key := r.key()
		if last != nil && key == lastKey && !d.Stale() {
			return r
		}
		last, lastKey = r, key
	}
	return last
}

// key identifies a report's manifest and problems, to tell whether two
// checks agree.
func (r *CheckReport) key() string {
	var b strings.Builder
	if r.Manifest != nil {
		b.Write(r.Manifest.Encode())
	}
	for _, p := range r.Problems {
		b.WriteString(p.String())
		b.WriteByte(0)
	}
	return b.String()
}

// checkOnce checks the directory once; the Dir is nil when it cannot be
// opened.
func checkOnce(fsys vfs.FS, dir string, cryptKey []byte) (*CheckReport, *savedir.Dir) {
	r := &CheckReport{cryptKey: cryptKey}
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	if err != nil {
		r.add(".", -1, err)
		return r, nil
	}
	checked := map[string]bool{} // files whose every byte was checked
	if m := d.Manifest(); m != nil {
		r.Manifest = m
		checkGeneration(r, d, m, checked)
	}
	for _, b := range d.Backups() {
		r.Backups++
		checkGeneration(r, d, b, checked)
	}
	if m := d.Manifest(); m != nil {
		checkCopy(r, d, m, checked)
		checkPlayersCopy(r, d, m, checked)
	}
	checkMirrors(r, d)
	r.Problems = append(r.Problems, d.DamagedBackups()...)
	if r.Manifest == nil {
		err := d.ManifestErr()
		stores, worlds := unnamedFiles(d, checked)
		if errors.Is(err, autosave.ErrNoSave) {
			if len(stores)+len(worlds)+r.Backups+len(d.DamagedBackups()) == 0 {
				r.add(savedir.ManifestName, -1, emptyDir(dir))
				return r, d
			}
			err = fmt.Errorf("%w: manifest missing; run arksave repair to rebuild it from the chunk store and the newest intact world file", autosave.ErrCorrupt)
		} else if errors.Is(err, autosave.ErrCorrupt) {
			err = fmt.Errorf("%w; run arksave repair to rebuild it", err)
		}
		r.add(savedir.ManifestName, -1, err)
		for _, name := range worlds {
			r.Worlds++
			data, err := readNamed(d, name)
			if err == nil {
				err = r.readInfo(data)
			}
			if err != nil {
				r.add(name, -1, err)
			}
		}
		for _, name := range stores {
			checkStoreFile(r, d, name)
		}
	}
	// Generations share a store file: report each damaged place once.
	seen := map[string]bool{}
	kept := r.Problems[:0]
	for _, p := range r.Problems {
		key := fmt.Sprintf("%s@%d", p.File, p.Offset)
		if p.Offset < 0 || !seen[key] {
			seen[key] = true
			kept = append(kept, p)
		}
	}
	r.Problems = kept
	return r, d
}

// checkMirrors verifies the mirrors in backups/ (savedir.MirrorName): the
// records each holds and, for a file no problem names yet, that the mirror
// holds its bytes. A mirror shorter than its file is the next commit's to
// grow, not damage.
func checkMirrors(r *CheckReport, d *savedir.Dir) {
	damaged := map[string]bool{}
	for _, p := range r.Problems {
		damaged[p.File] = true
	}
	n, probs := d.CheckMirrors(func(name string) bool { return damaged[name] })
	r.Mirrors += n
	r.Problems = append(r.Problems, probs...)
}

// readRef reads the file a manifest names and verifies its size and
// CRC32-C; the error does not repeat the file's name, which the problem
// carries.
func readRef(d *savedir.Dir, ref savedir.FileRef) ([]byte, error) {
	p, err := d.File(ref.Name)
	if err != nil {
		return nil, err
	}
	st, err := d.FS().Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: missing; the manifest names it", autosave.ErrCorrupt)
	case err != nil:
		return nil, err
	case st.Size() != ref.Size:
		return nil, fmt.Errorf("%w: %d bytes, the manifest says %d", autosave.ErrCorrupt, st.Size(), ref.Size)
	}
	data, err := vfs.ReadFileLimit(d.FS(), p, ref.Size)
	if err != nil {
		return nil, err
	}
	if got := crc32.Checksum(data, castagnoli); got != ref.CRC32C {
		return nil, fmt.Errorf("%w: crc32c %08x, the manifest says %08x", autosave.ErrCorrupt, got, ref.CRC32C)
	}
	return data, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readNamed reads a file of the directory by its name, through the Dir's
// checks of names and file types.
func readNamed(d *savedir.Dir, name string) ([]byte, error) {
	p, err := d.File(name)
	if err != nil {
		return nil, err
	}
	return vfs.ReadFile(d.FS(), p)
}

// unnamedFiles lists the chunk stores and top-level world files of a
// directory without a manifest that no checked generation named.
func unnamedFiles(d *savedir.Dir, checked map[string]bool) (stores, worlds []string) {
	for _, n := range d.Leftovers() {
		_, world := savedir.WorldGeneration(n)
		_, store := savedir.StoreGeneration(n)
		switch {
		case checked[n]:
		case store:
			stores = append(stores, n)
		case world:
			worlds = append(worlds, n)
		}
	}
	return stores, worlds
}

func checkGeneration(r *CheckReport, d *savedir.Dir, m *savedir.Manifest, checked map[string]bool) {
	r.Worlds++
	checked[m.World.Name] = true
	world, err := readRef(d, m.World)
	if err != nil {
		r.add(m.World.Name, -1, err)
	} else if err := r.readInfo(world); err != nil {
		r.add(m.World.Name, -1, err)
	}
	checkPlayers(r, d, m, checked)
	checked[m.Chunks.Name] = true
	o := chunkstore.Options{FS: d.FS(), ReadOnly: true, Key: r.cryptKey}
	store, err := d.File(m.Chunks.Name)
	if err == nil {
		o.Root, err = rootOf(d, m)
	}
	var s *chunkstore.Store
	if err == nil {
		s, err = chunkstore.Open(store, &o)
	}
	var openErr error
	if errors.Is(err, chunkstore.ErrCorrupt) {
		// The generation's page table is damaged: a repair open lets Check
		// report it, and whatever else is damaged.
		o.Repair = true
		if rs, rerr := chunkstore.Open(store, &o); rerr == nil {
			s, openErr, err = rs, err, nil
		}
	}
	if err != nil && checkOtherPixels(r, d, m, err) {
		return
	}
	if err != nil {
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, err))
		return
	}
	defer s.Close()
	r.Stores++
	rep := s.Check()
	r.Types = rep.Types
	r.EncryptedRecords += rep.Encrypted
	r.WrongKeyRecords += rep.WrongKey
	if m == r.Manifest {
		r.Zstd = rep.Zstd
	}
	problems := rep.Problems
	problems = append(problems, dataFileProblems(d, m, s)...)
	if openErr != nil && !slices.ContainsFunc(problems, func(p chunkstore.Problem) bool { return p.Section == chunkstore.SectionTable }) {
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, openErr))
	}
	addStoreProblems(r, m.Chunks.Name, fmt.Sprintf("generation %d: ", m.Generation), problems)
	checkSections(r, s, m)
}

// checkSections reads every entity section the store generation keeps with
// its chunks (the regional entities), checking each as a PECS file.
func checkSections(r *CheckReport, s *chunkstore.Store, m *savedir.Manifest) {
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type != chunkstore.BodyBlock {
			return true
		}
		blk, err := s.EntitiesKey(e.Key)
		if err != nil {
			return true // Check reported the block
		}
		for i, sec := range blk.Sections {
			if err := r.readInfo(sec); err != nil {
				pos, key := e.Pos, e.Key
				r.Problems = append(r.Problems, chunkstore.Problem{File: m.Chunks.Name, Section: chunkstore.SectionBodies, Offset: e.Handle.Offset, Pos: &pos, Key: &key,
					Err: fmt.Errorf("generation %d: entity section %d: %w", m.Generation, i, err)})
			}
		}
		return true
	})
}

// checkPlayers checks the players a generation names: the index (size,
// CRC32-C, its own checks) and every record in it, each as a PECS file.
func checkPlayers(r *CheckReport, d *savedir.Dir, m *savedir.Manifest, checked map[string]bool) {
	if m.Players == nil {
		return
	}
	r.Players++
	checked[m.Players.Index.Name] = true
	checked[m.Players.Data] = true
	p, err := d.ReadPlayers(m)
	if err != nil {
		r.add(m.Players.Index.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, err))
		return
	}
	checkPlayerRecords(r, d, p, fmt.Sprintf("generation %d", m.Generation))
}

// checkPlayerRecords reads every record of the players p, each as a PECS
// file; a damaged one is a problem of p's data file, its error prefixed
// with what the players are.
func checkPlayerRecords(r *CheckReport, d *savedir.Dir, p *savedir.Players, what string) {
	for _, e := range p.Entries {
		sec, err := d.ReadPlayer(p, e.ID)
		if err == nil {
			err = r.readInfo(sec)
		}
		if err != nil {
			r.add(p.Ref.Data, e.Offset, fmt.Errorf("%s: player %q: %w", what, e.ID, err))
		}
	}
}

// maxPlayersIndex bounds the players index check reads whole: the bound
// autosave reads them with.
const maxPlayersIndex = 1 << 30

// checkPlayersCopy checks the copy of the committed generation m's players
// that the writer made for its backup (savedir.CopiedPlayersName and
// CopiedPlayersDataName), when there is one: no manifest names it until the
// next save retires m, but a load reads the players from it when m's are
// damaged. The writer writes the copy's data file first, then its index
// through a temp file renamed into place: a copy whose index is not there
// yet is being written (or was never made), not damaged.
func checkPlayersCopy(r *CheckReport, d *savedir.Dir, m *savedir.Manifest, checked map[string]bool) {
	index, data := savedir.CopiedPlayersName(m.Generation), savedir.CopiedPlayersDataName(m.Generation)
	if checked[index] {
		return
	}
	p, err := d.File(index)
	if err == nil {
		if _, err = d.FS().Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
	checked[index], checked[data] = true, true
	r.Players++
	what := fmt.Sprintf("the copy of generation %d's players made for its backup", m.Generation)
	var idx []byte
	if err == nil {
		idx, err = vfs.ReadFileLimit(d.FS(), p, maxPlayersIndex)
		if errors.Is(err, vfs.ErrTooLarge) {
			err = fmt.Errorf("%w: %w", autosave.ErrCorrupt, err)
		}
	}
	var entries []savedir.PlayerEntry
	if err == nil {
		_, entries, err = savedir.ParsePlayersIndex(idx)
	}
	if err != nil {
		r.add(index, -1, fmt.Errorf("%s: %w", what, err))
		return
	}
	if dp, err := d.File(data); err != nil {
		r.add(data, -1, fmt.Errorf("%s: %w", what, err))
		return
	} else if _, err := d.FS().Lstat(dp); errors.Is(err, fs.ErrNotExist) {
		r.add(data, -1, fmt.Errorf("%s: %w: missing, while its index %s is in place (the writer writes the index last)", what, autosave.ErrCorrupt, index))
		return
	}
	ref := savedir.PlayersRef{Index: savedir.FileRef{Name: index, Size: int64(len(idx)), CRC32C: crc32.Checksum(idx, castagnoli)}, Data: data}
	checkPlayerRecords(r, d, &savedir.Players{Ref: ref, Entries: entries}, what)
}

// dataFileProblems checks the data files a manifest names against those its
// store generation uses: each one it names is there (the store's check
// reports a damaged or short one), and it names every one the generation
// uses (a save directory keeps only the data files its manifests name).
func dataFileProblems(d *savedir.Dir, m *savedir.Manifest, s *chunkstore.Store) []chunkstore.Problem {
	var out []chunkstore.Problem
	used := map[string]bool{}
	// The store's files are named relative to its own directory: backups/
	// for a backup's own store.
	rel := func(n string) string { return path.Join(path.Dir(m.Chunks.Name), n) }
	for _, f := range storetool.Tool.Files(s) {
		used[rel(f.Name)] = true // the store's check reports these when missing or damaged
	}
	for _, name := range m.Chunks.Data {
		p, err := d.File(name)
		if err == nil && !used[name] {
			_, err = d.FS().Stat(p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %s is missing; the manifest of generation %d names it", chunkstore.ErrCorrupt, name, m.Generation)
		}
		if err != nil {
			out = append(out, chunkstore.Problem{File: name, Section: chunkstore.SectionFile, Offset: -1, Err: err})
		}
	}
	if m.Version < savedir.ManifestVersion {
		return out // it predates data files: all of the store's are kept
	}
	for _, f := range storetool.Tool.Files(s) {
		if f.Number != 0 && !slices.Contains(m.Chunks.Data, rel(f.Name)) && f.Err == nil {
			out = append(out, chunkstore.Problem{File: savedir.ManifestName, Offset: -1,
				Err: fmt.Errorf("%w: generation %d uses data file %s, which its manifest does not name", autosave.ErrCorrupt, m.Generation, f.Name)})
		}
	}
	return out
}

// checkCopy checks the copy of the committed generation m's chunk store
// that the writer made for its backup (savedir.CopiedChunksName), when
// there is one: no manifest names it until the next save retires m, but it
// is the first thing a load falls back to when m's store is damaged.
func checkCopy(r *CheckReport, d *savedir.Dir, m *savedir.Manifest, checked map[string]bool) {
	name := savedir.CopiedChunksName(m.Generation)
	if checked[name] {
		return
	}
	p, err := d.File(name)
	if err == nil {
		if _, err := d.FS().Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return // none was made
		}
	}
	checked[name] = true
	checkStoreFile(r, d, name)
}

// checkStoreFile checks a chunk store that no manifest names, at its
// newest generation, or scans it when no header slot is valid.
func checkStoreFile(r *CheckReport, d *savedir.Dir, name string) {
	p, err := d.File(name)
	if err != nil {
		r.add(name, -1, err)
		return
	}
	rep := storetool.Tool.CheckFile(d.FS(), p, r.cryptKey)
	if rep.Slots > 0 {
		r.Stores++
	}
	r.EncryptedRecords += rep.Encrypted
	r.WrongKeyRecords += rep.WrongKey
	addStoreProblems(r, name, "", rep.Problems)
}

// addStoreProblems adds the problems of the chunk store file (named
// relative to the save directory): a problem of one of its data files
// names that file, in the store's directory (backups/ for a backup's own
// store).
func addStoreProblems(r *CheckReport, file, prefix string, ps []chunkstore.Problem) {
	for _, p := range ps {
		switch {
		case p.File == "":
			p.File = file
		case !strings.Contains(p.File, "/"):
			p.File = path.Join(path.Dir(file), p.File)
		}
		if prefix != "" {
			p.Err = fmt.Errorf("%s%w", prefix, p.Err)
		}
		r.Problems = append(r.Problems, p)
	}
}

// checkEstimate guesses the bytes a directory check reads: each world file
// once, each chunk store about twice (a scan of every record, then every
// live record decoded) for each generation that names it.
func checkEstimate(fsys vfs.FS, dir string) int64 {
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	if err != nil {
		return 0
	}
	gens := d.Backups()
	if m := d.Manifest(); m != nil {
		gens = append(gens, m)
	}
	var n int64
	size := func(name string) int64 { return dirFileSize(fsys, d, name) }
	for _, m := range gens {
		n += m.World.Size + 2*size(m.Chunks.Name)
		for _, name := range m.Chunks.Data {
			n += 2 * size(name)
		}
	}
	if d.Manifest() == nil {
		for _, s := range storeFiles(fsys, dir) {
			n += 2 * size(s)
		}
	}
	return n
}
