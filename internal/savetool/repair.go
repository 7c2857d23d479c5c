package savetool

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// RepairOptions configure [Repair].
type RepairOptions struct {
	Options
	// DryRun reports what a repair would keep and drop, and writes nothing.
	DryRun bool
	// EmptyWorld lets a repair that finds no intact ECS world file commit an
	// empty one, keeping the chunks: the game then starts its entities anew
	// on the saved terrain.
	EmptyWorld bool
	// EmptyChunks lets a repair that can read no chunk store commit one with
	// no stored chunks: every chunk then regenerates.
	EmptyChunks bool
	// ChunkSize, TileSize, Seed and Generator (only its Version is used; see
	// [VersionOnly]) stand in for what a chunk store's header records, when
	// both its header slots are damaged and no manifest or backup keeps a
	// root. Zero values are unknown.
	ChunkSize, TileSize uint16
	Seed                uint64
	Generator           chunkstore.Generator
}

// RepairReport says what [Repair] found, kept and dropped.
type RepairReport struct {
	// Before is what checking the directory found; After, what checking the
	// repaired directory finds (nil on a dry run or when nothing was done).
	Before, After *CheckReport
	NothingToDo   bool   // Before found no damage
	DryRun        bool   // nothing was written
	Generation    uint64 // the repaired generation committed, 0 if none

	Manifest string      // what became of the manifest
	World    WorldSource // where the ECS world came from
	Store    StoreSource // where the chunks came from

	Kept     Counts // what the repaired generation holds
	Dropped  []Loss // chunks and body sets lost: they regenerate, or their bodies are gone
	Reverted []Loss // chunks whose newest record was damaged, read from an older one

	BackupsKept      []uint64        // backups kept as they were
	BackupsRewritten []uint64        // backups whose chunk store generation was copied out of a damaged file
	BackupsDropped   []DroppedBackup // backups removed, with why

	Notes []string // everything else worth saying, one sentence each
}

// WorldSource is the ECS world file a repair commits.
type WorldSource struct {
	File       string // relative to the save directory; empty for an empty world
	Generation uint64 // the generation it belongs to
	Fallback   bool   // not the committed generation's own world file
	Empty      bool   // no intact world was left: an empty world
}

// StoreSource is the chunk store a repair copies from.
type StoreSource struct {
	File       string // relative to the save directory; empty when none could be read
	How        string // how it was opened: through which root, header slot or scan
	Generation uint64 // the store generation read
	Rebuilt    bool   // its page table was rebuilt by a scan
	New        string // the repaired store written
	Root       []byte `json:"-"` // the root it was opened through, if any
}

// Counts are what a chunk store generation holds.
type Counts struct {
	Chunks, Empty, Delta, Full, Palette int
	BodyBlocks, Bodies                  int
}

// Loss is a chunk or body set a repair could not keep as saved.
type Loss struct {
	Pos    chunkstore.Pos // the first two axes of Key
	Key    chunkstore.Key // the chunk's key, of the store's axes
	Bodies bool           // the chunk's pixel bodies, not its pixels
	Reason string
}

// DroppedBackup is a backup a repair removed.
type DroppedBackup struct {
	Generation uint64
	Reason     string
}

func (b DroppedBackup) String() string { return fmt.Sprintf("backup %d: %s", b.Generation, b.Reason) }

func (l Loss) String() string {
	what := "chunk"
	if l.Bodies {
		what = "bodies of chunk"
	}
	return fmt.Sprintf("%s %v: %s", what, l.key(), l.Reason)
}

// key returns the chunk's key: Key, or Pos for a Loss that has no Key.
func (l Loss) key() chunkstore.Key {
	if l.Key.Axes() == 0 {
		return l.Pos.Key()
	}
	return l.Key
}

// VersionOnly returns a Generator that carries only a version number, for
// [RepairOptions.Generator] when the game's generator itself is not at
// hand. It generates air, at keys of any axes: it is a
// chunkstore.KeyGenerator, so that it opens stores of 3 and 4 axes too.
func VersionOnly(v uint32) chunkstore.Generator { return versionOnly(v) }

type versionOnly uint32

func (v versionOnly) Version() uint32                            { return uint32(v) }
func (versionOnly) Generate(int32, int32, uint64, []uint32)      {}
func (versionOnly) GenerateKey(chunkstore.Key, uint64, []uint32) {}

// Repair recovers everything recoverable of the save directory at dir into
// a new generation, and commits it like a save does (world file, then the
// manifest): until then the original files stay as they were.
//
//   - The chunk store generation the manifest names is opened through its
//     root (opened with chunkstore.Options.Repair); a damaged page table is rebuilt
//     by scanning the records forward; damaged records are dropped (those
//     chunks regenerate, those bodies are gone); a clean copy is written
//     with CompactTo to a new file.
//
//   - A damaged or missing world file is replaced by the newest intact one
//     (a backup's), and the report says so.
//
//   - A lost or damaged manifest is rebuilt from the newest chunk store
//     (its newest valid header slot, or a scan) and the newest intact world
//     file.
//
//   - Backups stay when intact; a backup whose world file is damaged is
//     dropped; one whose chunk store file is damaged elsewhere gets its
//     generation copied into a file of its own.
//
//   - A chunk or body set lost from the chunk store (its record damaged, or
//     gone with the page table that named it) comes back from the newest
//     backup whose store holds it intact, and is listed as reverted, with
//     the backup it came from.
//
// Every chunk that may read differently from the damaged generation is
// listed as dropped or reverted; chunks that left no trace at all are
// counted in a note.
//
// After a repair the directory checks clean and the game loads it. Repair
// takes the directory's lock (a dry run only reads): while a game holds
// it, it fails with ErrInUse naming the game.
func Repair(dir string, o RepairOptions) (*RepairReport, error) {
	t, fsys := newTracker(o.Options)
	rep := &RepairReport{DryRun: o.DryRun}
	var d *savedir.Dir
	var err error
	if o.DryRun {
		d, err = openSave(fsys, dir)
	} else {
		d, err = openLocked(fsys, dir, savedir.OpenDirForRepair)
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	t.begin("checking", checkEstimate(fsys, dir))
	rep.Before = checkDir(fsys, dir)
	t.end()
	if len(rep.Before.Problems) == 1 && rep.Before.Problems[0].File == "." {
		return nil, rep.Before.Problems[0].Err
	}
	manErr := d.ManifestErr()
	switch {
	case errors.Is(manErr, autosave.ErrVersion):
		return nil, fmt.Errorf("%w; the save was written by a newer arksave: use that version", manErr)
	case rep.Before.OK():
		rep.NothingToDo = true
		return rep, nil
	case len(rep.Before.Problems) == 1 && errors.Is(rep.Before.Problems[0].Err, ErrNotASave):
		return nil, rep.Before.Problems[0].Err
	}
	noteRefused(d, fsys, rep)
	now := rep.Before
	if o.DryRun {
		for _, n := range d.MirrorRestorable() {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: would be restored from its mirror %s", n, savedir.MirrorName(n)))
		}
	} else {
		if now = restoreMirrored(d, fsys, dir, rep); now.OK() {
			rep.Manifest = fmt.Sprintf("kept: generation %d is intact once its damaged files were restored from their mirrors", d.Generation())
			if err := d.Cleanup(); err != nil {
				return rep, err
			}
			rep.After = now
			return rep, nil
		}
	}
	damaged := map[string]bool{}
	for _, p := range now.Problems {
		damaged[p.File] = true
		if store, ok := storeOfDataFile(p.File); ok {
			damaged[store] = true // a data file's damage is its store's
		}
	}
	man := d.Manifest()
	backups := d.Backups()
	r := &repairer{d: d, fsys: fsys, o: o, t: t, rep: rep, damaged: damaged, man: man, backups: backups}
	playersDamaged := man != nil && man.Players != nil && (damaged[man.Players.Index.Name] || damaged[man.Players.Data])
	if man != nil && !damaged[man.World.Name] && !damaged[man.Chunks.Name] && !playersDamaged {
		rep.Manifest = fmt.Sprintf("kept: generation %d is intact", man.Generation)
		_, _ = r.keepCurrent() // for the report only
	} else if err := r.repairCurrent(); err != nil {
		return nil, err
	}
	if err := r.repairBackups(); err != nil {
		return rep, err
	}
	r.repairPlayersCopy()
	r.repairCopy()
	if o.DryRun {
		return rep, nil
	}
	// What no manifest names any more goes.
	if err := d.Cleanup(); err != nil {
		return rep, err
	}
	t.begin("checking the repair", checkEstimate(fsys, dir))
	rep.After = checkDir(fsys, dir)
	t.end()
	return rep, nil
}

// restoreMirrored restores from their mirrors the damaged files that a
// generation reads intact with its mirrors in their place (as a load's
// fallback would read it), and drops the damaged mirrors, growing those of
// the committed generation again from its files. It returns the check of
// the directory afterwards: rep.Before when nothing changed.
func restoreMirrored(d *savedir.Dir, fsys vfs.FS, dir string, rep *RepairReport) *CheckReport {
	restored, err := d.RestoreFromMirrors()
	for _, n := range restored {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: restored from its mirror %s", n, savedir.MirrorName(n)))
	}
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("restoring from the mirrors stopped: %v", err))
	}
	changed := len(restored) > 0
	for _, p := range rep.Before.Problems {
		if _, ok := savedir.MirroredName(p.File); !ok {
			continue
		}
		if err := d.RemoveMirror(p.File); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s is damaged and could not be removed (%v): remove it by hand", p.File, err))
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s is damaged: removed, and made again from its file", p.File))
		changed = true
	}
	if !changed {
		return rep.Before
	}
	if d.Manifest() != nil {
		if _, err := d.GrowMirrors(); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("the mirrors could not all be grown again (%v): the next save grows them", err))
		}
	}
	return checkDir(fsys, dir)
}

// storeOfDataFile returns the chunk store (relative to the save
// directory) that the data file rel belongs to, in the same directory
// (backups/ for a backup's own store), and whether rel is a data file's
// name.
func storeOfDataFile(rel string) (string, bool) {
	base := path.Base(rel)
	store, n, ok := storetool.Tool.ParseDataFileName(base)
	if !ok || storetool.Tool.DataFileName(store, n) != base {
		return "", false
	}
	return path.Join(path.Dir(rel), store), true
}

// noteRefused says, for each file of the save format in the directory that
// is not a regular file, that the repair refused it: a symbolic link is not
// followed, a named pipe or a device not opened; what it should hold counts
// as lost.
func noteRefused(d *savedir.Dir, fsys vfs.FS, rep *RepairReport) {
	for _, p := range d.Refused() {
		kind := "not a regular file"
		if fi, err := fsys.Lstat(filepath.Join(d.Path(), filepath.FromSlash(p.File))); err == nil {
			kind = fsguard.Describe(fi.Mode()) + ", not a regular file"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("refused %s: it is %s; it was neither followed nor opened, and what it should hold counts as lost (it is left in place)", p.File, kind))
	}
}

type repairer struct {
	d       *savedir.Dir
	fsys    vfs.FS
	o       RepairOptions
	t       *tracker
	rep     *RepairReport
	damaged map[string]bool
	man     *savedir.Manifest
	backups []*savedir.Manifest
	newGen  uint64
	// ownCopy holds the positions of the chunks in the copy of the
	// committed generation's store made for its backup (the first fill
	// source), when there is one: every one of them is the generation's.
	ownCopy map[chunkstore.Key]bool
}

func (r *repairer) note(format string, args ...any) {
	r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(format, args...))
}

// repairCurrent commits the repaired generation.
func (r *repairer) repairCurrent() error {
	rep := r.rep
	switch err := r.d.ManifestErr(); {
	case err == nil:
		rep.Manifest = fmt.Sprintf("intact (generation %d); the repair replaces the files of it that are damaged", r.man.Generation)
	case errors.Is(err, autosave.ErrNoSave):
		rep.Manifest = "rebuilt: it was missing"
	default:
		rep.Manifest = fmt.Sprintf("rebuilt: %v", err)
	}
	r.newGen = r.d.HighestGeneration() + 1

	world, err := r.pickWorld()
	if err != nil {
		return err
	}
	if r.man != nil && !r.damaged[r.man.Chunks.Name] {
		return r.commitKeptStore(world)
	}
	src, err := r.openSource()
	if err != nil {
		return err
	}
	if src != nil {
		defer src.Close()
	}
	fills, fillNames := r.fillSources()
	defer func() {
		for _, f := range fills {
			f.Close()
		}
	}()
	var loss *scanLoss
	if src != nil && r.rep.Store.Rebuilt {
		loss = r.scanLoss(src)
	}
	if r.o.DryRun {
		if src != nil {
			r.classify(src, nil, nil, fills, fillNames, loss)
			r.rep.Kept = countsOf(src)
		}
		return nil
	}

	name := savedir.CompactedChunksName(r.newGen)
	p, err := r.d.File(name)
	if err != nil {
		return err
	}
	var fixed *chunkstore.Store
	if src != nil {
		r.t.begin("writing "+name, 2*storetool.Tool.Stats(src).RecordBytes)
		var filled []storetool.Filled
		fixed, filled, err = storetool.Tool.CompactToFilling(src, p, r.missing(loss), fills...)
		r.t.end()
		if err != nil {
			_ = removeStore(r.d, name)
			return fmt.Errorf("repair: write %s: %w", name, err)
		}
		r.classify(src, fixed, filled, fills, fillNames, loss)
	} else {
		fixed, err = r.emptyStore(name)
		if err != nil {
			return err
		}
	}
	defer fixed.Close()
	rep.Store.New = name
	rep.Kept = countsOf(fixed)
	players, err := r.pickPlayers()
	if err != nil {
		_ = removeStore(r.d, name)
		return err
	}
	m, _, err := r.d.Commit(savedir.Commit{
		World:      world,
		Chunks:     savedir.StoreRef{Name: name, Generation: fixed.Generation(), Root: fixed.Root(), Data: storetool.Tool.DataFileNames(fixed)},
		Players:    players,
		Generation: r.newGen,
		NoBackup:   true,
		MaxBackups: len(r.backups) + len(r.d.DamagedBackups()),
	})
	if err != nil {
		_ = removeStore(r.d, name)
		return fmt.Errorf("repair: commit generation %d: %w", r.newGen, err)
	}
	rep.Generation = m.Generation
	return nil
}

// keepCurrent reports the committed generation's chunk store, intact, as
// what the repair keeps, and returns its reference: it stays as it is.
func (r *repairer) keepCurrent() (savedir.StoreRef, error) {
	ref, s, err := keptStoreRef(r.d, r.man, r.fsys)
	if err != nil {
		return ref, fmt.Errorf("repair: %w", err)
	}
	defer s.Close()
	r.rep.Store = StoreSource{File: ref.Name, How: "kept as it was: it is intact", Generation: ref.Generation}
	r.rep.Kept = countsOf(s)
	return ref, nil
}

// commitKeptStore commits the repaired world with the committed chunk
// store generation, which is intact.
func (r *repairer) commitKeptStore(world []byte) error {
	ref, err := r.keepCurrent()
	if err != nil {
		return err
	}
	if r.o.DryRun {
		return nil
	}
	players, err := r.pickPlayers()
	if err != nil {
		return err
	}
	m, _, err := r.d.Commit(savedir.Commit{World: world, Chunks: ref, Players: players, Generation: r.newGen, NoBackup: true, MaxBackups: len(r.backups)})
	if err != nil {
		return fmt.Errorf("repair: commit generation %d: %w", r.newGen, err)
	}
	r.rep.Generation = m.Generation
	return nil
}

// pickPlayers returns the players the repaired generation names. The
// players are those of the first index that reads, among the committed
// generation's, the copy of it made for its backup, the players index
// files of the directory (newest first) and the backups' (newest first);
// each player's record is taken from the first of them that holds it
// intact (the same generation's copy first, so that nothing reverts while
// a copy is intact), and said so when that is not the index's own.
// Players whose record is intact nowhere are left out, and said so. When
// anything differs from the committed players, the players are written
// into files of the repaired generation's own.
func (r *repairer) pickPlayers() (*savedir.PlayersRef, error) {
	srcs := r.playersSources()
	if len(srcs) == 0 {
		if r.man != nil && r.man.Players != nil || len(r.d.PlayersFiles()) > 0 {
			r.note("players: no intact players index is left; the repaired save holds no player")
		}
		return nil, nil
	}
	base := srcs[0]
	if r.man == nil || r.man.Players == nil || base.p.Ref != *r.man.Players {
		r.note("players: from %s", base.label)
	}
	var recs []snapshot.PlayerRecord
	same := r.man != nil && r.man.Players != nil && base.p.Ref == *r.man.Players
	for _, e := range base.p.Entries {
		sec, from, err := r.readPlayer(srcs, e.ID)
		switch {
		case err != nil:
			r.note("player %q dropped: its record is damaged (%v) and no copy holds it intact", e.ID, err)
			same = false
			continue
		case from != base:
			r.note("player %q: taken from %s: its record in %s is damaged", e.ID, from.label, base.label)
			same = false
		}
		recs = append(recs, snapshot.PlayerRecord{ID: e.ID, Section: sec})
	}
	if same {
		ref := *r.man.Players
		return &ref, nil
	}
	if r.o.DryRun {
		return nil, nil
	}
	ref, err := r.d.WritePlayersFiles(r.newGen, recs)
	if err != nil {
		return nil, fmt.Errorf("repair: write the players: %w", err)
	}
	return &ref, nil
}

// playersSource is a players index a repair can take players from.
type playersSource struct {
	p     *savedir.Players
	label string
}

// playersSources returns the players indexes that read, in the order a
// repair trusts them: the committed generation's, the copy of them made
// for its backup, the directory's players index files (newest first, none
// newer than the manifest), the backups' (newest first).
func (r *repairer) playersSources() []*playersSource {
	var out []*playersSource
	seen := map[string]bool{}
	add := func(m *savedir.Manifest, label string) {
		if m.Players == nil || seen[m.Players.Index.Name] {
			return
		}
		if p, err := r.d.ReadPlayers(m); err == nil {
			seen[m.Players.Index.Name] = true
			out = append(out, &playersSource{p: p, label: fmt.Sprintf("%s (%s)", label, m.Players.Index.Name)})
		}
	}
	if r.man != nil {
		add(r.man, fmt.Sprintf("generation %d's players", r.man.Generation))
		if ref := r.d.PendingPlayers(); ref != nil && r.man.Players != nil {
			add(&savedir.Manifest{Generation: r.man.Generation, Players: ref}, fmt.Sprintf("the copy of generation %d's players", r.man.Generation))
		}
	}
	for _, name := range r.d.PlayersFiles() {
		if g, _ := savedir.PlayersGeneration(name); seen[name] || r.man != nil && g > r.man.Generation {
			continue
		}
		if p, err := r.d.ReadPlayersFile(name); err == nil {
			seen[name] = true
			out = append(out, &playersSource{p: p, label: fmt.Sprintf("%s (%s)", name, p.Ref.Data)})
		}
	}
	for _, b := range r.backups {
		add(b, fmt.Sprintf("backup %d's players", b.Generation))
	}
	return out
}

// readPlayer returns the entity section of player id from the first
// source that holds it intact, and that source.
func (r *repairer) readPlayer(srcs []*playersSource, id string) ([]byte, *playersSource, error) {
	var first error
	for _, s := range srcs {
		if _, ok := s.p.Find(id); !ok {
			continue
		}
		sec, err := r.intactPlayer(s.p, id)
		if err == nil {
			return sec, s, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, nil, first
}

// pickWorld returns the newest intact ECS world file.
func (r *repairer) pickWorld() ([]byte, error) {
	type cand struct {
		gen  uint64
		name string
		ref  *savedir.FileRef
	}
	var cands []cand
	named := map[string]bool{}
	if r.man != nil {
		cands = append(cands, cand{r.man.Generation, r.man.World.Name, &r.man.World})
		named[r.man.World.Name] = true
	}
	for _, b := range r.backups {
		cands = append(cands, cand{b.Generation, b.World.Name, &b.World})
		named[b.World.Name] = true
	}
	for _, sub := range []string{".", savedir.BackupDir} {
		names, _ := r.fsys.ReadDir(filepath.Join(r.d.Path(), sub))
		for _, n := range names {
			rel := path.Join(sub, n)
			g, ok := savedir.WorldGeneration(n)
			if ok && !named[rel] {
				cands = append(cands, cand{g, rel, nil})
			}
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		switch {
		case a.gen > b.gen:
			return -1
		case a.gen < b.gen:
			return 1
		}
		return 0
	})
	var why []string
	for _, c := range cands {
		var data []byte
		var err error
		if c.ref != nil {
			data, err = r.d.ReadWorld(&savedir.Manifest{World: *c.ref})
		} else if p, perr := r.d.File(c.name); perr != nil {
			err = perr
		} else {
			data, err = vfs.ReadFile(r.fsys, p)
		}
		if err == nil {
			err = checkStoredPECS(data)
		}
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", c.name, err))
			continue
		}
		r.rep.World = WorldSource{File: c.name, Generation: c.gen, Fallback: r.man == nil || c.name != r.man.World.Name}
		if r.man != nil && c.gen < r.man.Generation {
			r.note("the ECS world is generation %d's (%s): what changed in entities and resources since is lost", c.gen, c.name)
		}
		return data, nil
	}
	if !r.o.EmptyWorld {
		return nil, fmt.Errorf("%w (%s); rerun with --empty-world to keep the chunks with an empty ECS world",
			ErrNoWorld, strings.Join(append(why, "no other world file"), "; "))
	}
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, ecs.NewWorld()); err != nil {
		return nil, err
	}
	r.rep.World = WorldSource{Empty: true, Fallback: true}
	r.note("no intact ECS world file: the repaired save has an empty ECS world")
	return buf.Bytes(), nil
}

// known returns the game's constants as the directory records them (any
// manifest's root) or the options give them.
func (r *repairer) known() (chunkstore.Options, bool) {
	var roots [][]byte
	if r.man != nil {
		roots = append(roots, r.man.Chunks.Root)
	}
	for _, b := range r.backups {
		roots = append(roots, b.Chunks.Root)
	}
	for _, root := range roots {
		if ri, err := storetool.Tool.ParseRoot(root); err == nil {
			return chunkstore.Options{ChunkSize: ri.ChunkSize, TileSize: ri.TileSize, Seed: ri.Seed,
				Generator: versionOnly(ri.GeneratorVersion)}, true
		}
	}
	c := chunkstore.Options{ChunkSize: r.o.ChunkSize, TileSize: r.o.TileSize, Seed: r.o.Seed, Generator: r.o.Generator}
	return c, c.ChunkSize != 0 && c.TileSize != 0 && c.Seed != 0 && c.Generator != nil
}

var errUnknown = fmt.Errorf("%w: both header slots of the chunk store are damaged and no manifest keeps a root; "+
	"give the game's --chunk-size, --tile-size, --seed and --generator-version", ErrUnknownConfig)

// openSource opens the chunk store to copy from, or returns nil when none
// can be read and EmptyChunks allows that.
func (r *repairer) openSource() (*chunkstore.Store, error) {
	type cand struct {
		name string
		root []byte
		gen  uint64 // for a manifest of format 1
		how  string
	}
	var fromManifests, fromDisk []cand
	if c := r.intactCopy(); c != nil {
		// What a load falls back to first: the generation's chunks as
		// committed, bodies included, none lost.
		fromManifests = append(fromManifests, cand{c.Name, c.Root, c.Generation,
			fmt.Sprintf("the root of the copy of generation %d's store made for its backup (what a load falls back to)", r.man.Generation)})
	}
	if r.man != nil {
		fromManifests = append(fromManifests, cand{r.man.Chunks.Name, r.man.Chunks.Root, r.man.Chunks.Generation, "the manifest's root"})
	}
	for _, b := range r.backups {
		fromManifests = append(fromManifests, cand{b.Chunks.Name, b.Chunks.Root, b.Chunks.Generation, fmt.Sprintf("the root of backup %d", b.Generation)})
	}
	for _, n := range storeFiles(r.fsys, r.d.Path()) {
		fromDisk = append(fromDisk, cand{name: n})
	}
	cands := append(fromManifests, fromDisk...)
	if r.man == nil {
		// A lost manifest: the newest store on disk, at its newest generation.
		cands = append(fromDisk, fromManifests...)
	}
	var why []string
	for _, c := range cands {
		p, err := r.d.File(c.name)
		if err == nil {
			_, err = r.fsys.Stat(p)
		}
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", c.name, err))
			continue
		}
		root, how := c.root, c.how
		if root == nil && c.how != "" {
			// Format 1: the root of that generation, from its slot or its table.
			if found, err := storetool.Tool.FindRoot(r.fsys, p, c.gen); err == nil {
				root = found
			}
		}
		r.t.begin("reading "+c.name, fileSize(r.fsys, p))
		var s *chunkstore.Store
		if root != nil {
			s, err = chunkstore.Open(p, &chunkstore.Options{FS: r.fsys, Repair: true, Root: root})
		} else {
			how = "its newest valid header slot"
			s, err = chunkstore.Open(p, &chunkstore.Options{FS: r.fsys, Repair: true})
			if errors.Is(err, chunkstore.ErrNoValidHeader) {
				o, ok := r.known()
				if !ok {
					r.t.end()
					return nil, fmt.Errorf("%s: %w", c.name, errUnknown)
				}
				o.FS, o.Repair = r.fsys, true
				how = "a scan of the whole file (both header slots are damaged)"
				s, err = chunkstore.Open(p, &o)
			}
		}
		r.t.end()
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", c.name, err))
			continue
		}
		rebuilt := false
		for _, pr := range s.OpenReport().Problems {
			if pr.Section == chunkstore.SectionTable || strings.HasPrefix(how, "a scan") {
				rebuilt = true
			}
		}
		r.rep.Store = StoreSource{File: c.name, How: how, Generation: s.Generation(), Rebuilt: rebuilt, Root: root}
		if rebuilt {
			r.note("the page table of %s was damaged: the chunk index was rebuilt by scanning its records", c.name)
		}
		if r.man != nil && c.name != r.man.Chunks.Name {
			r.note("the chunks come from %s, not from %s that the manifest names", c.name, r.man.Chunks.Name)
		}
		return s, nil
	}
	if len(cands) == 0 {
		why = append(why, "the directory has no chunk store")
	}
	if !r.o.EmptyChunks {
		return nil, fmt.Errorf("%w (%s); rerun with --empty-chunks to keep the ECS world with no stored chunks (they all regenerate)",
			ErrNoChunks, strings.Join(why, "; "))
	}
	r.note("no chunk store could be read: the repaired save stores no chunks, every chunk regenerates")
	return nil, nil
}

// intactCopy returns the copy of the committed generation's chunk store
// that the writer made for its backup, when there is one and the check
// found it intact: a load falls back to it first when the generation's own
// store is damaged, so a repair reads the chunks from it.
func (r *repairer) intactCopy() *savedir.StoreRef {
	if r.man == nil {
		return nil
	}
	ref := r.d.PendingCopy()
	if ref == nil || r.damaged[ref.Name] {
		return nil
	}
	return ref
}

// repairCopy makes again, or drops, the copy of the committed generation's
// chunk store made for its backup when the check found it damaged, and
// says which: made again from the generation's store when the repair kept
// that generation (its store is intact); dropped with the generation when
// the repair committed a new one.
func (r *repairer) repairCopy() {
	if r.man == nil {
		return
	}
	name := savedir.CopiedChunksName(r.man.Generation)
	if !r.damaged[name] {
		return
	}
	kept := r.newGen == 0 // the committed generation stays, intact
	switch {
	case !kept:
		r.note("dropped %s, the damaged copy of generation %d's chunk store made for its backup: it goes with generation %d, which the repair replaces", name, r.man.Generation, r.man.Generation)
		return // the cleanup after the commit removes it
	case r.o.DryRun:
		r.note("%s, the copy of generation %d's chunk store made for its backup, is damaged: a repair makes it again from that store", name, r.man.Generation)
		return
	}
	if err := r.d.DropCopy(); err != nil {
		// A copy that is not a regular file is neither opened nor removed.
		r.note("%s, the copy of generation %d's chunk store made for its backup, is damaged and could not be removed (%v): remove it by hand", name, r.man.Generation, err)
		return
	}
	if err := r.copyStore(name); err != nil {
		_ = r.d.DropCopy()
		r.note("dropped %s, the damaged copy of generation %d's chunk store made for its backup; making it again failed (%v): the next save's backup of generation %d shares the current store",
			name, r.man.Generation, err, r.man.Generation)
		return
	}
	r.note("made %s again from generation %d's chunk store: the copy made for its backup was damaged", name, r.man.Generation)
}

// repairPlayersCopy drops the copy of the committed generation's players
// made for its backup when the check found it damaged, and says so: with
// the generation when the repair committed a new one; else on its own, and
// the next save's backup of the generation names the players files the
// generation uses, as without a copy. The copies of a generation's players
// and of its chunk store go together (savedir.Dir.DropCopy): an intact
// copy of the store is made again.
func (r *repairer) repairPlayersCopy() {
	if r.man == nil {
		return
	}
	g := r.man.Generation
	file := savedir.CopiedPlayersName(g)
	if data := savedir.CopiedPlayersDataName(g); !r.damaged[file] {
		file = data
	}
	if !r.damaged[file] {
		return
	}
	store := savedir.CopiedChunksName(g)
	switch {
	case r.newGen != 0:
		r.note("dropped %s, the damaged copy of generation %d's players made for its backup: it goes with generation %d, which the repair replaces", file, g, g)
		return // the cleanup after the commit removes it
	case r.o.DryRun:
		r.note("%s, the copy of generation %d's players made for its backup, is damaged: a repair drops it", file, g)
		return
	case r.damaged[store]:
		r.note("dropped %s, the damaged copy of generation %d's players made for its backup, with the damaged copy of its chunk store", file, g)
		return // repairCopy drops the two
	}
	remake := r.d.PendingCopy() != nil
	if err := r.d.DropCopy(); err != nil {
		r.note("%s, the copy of generation %d's players made for its backup, is damaged and could not be removed (%v): remove it by hand", file, g, err)
		return
	}
	r.note("dropped %s, the damaged copy of generation %d's players made for its backup: the next save's backup of generation %d shares the players files it uses", file, g, g)
	if !remake {
		return
	}
	if err := r.copyStore(store); err != nil {
		_ = r.d.DropCopy()
		r.note("dropped %s, the copy of generation %d's chunk store made for its backup, with it; making it again failed (%v): the next save's backup of generation %d shares the current store", store, g, err, g)
	}
}

// copyStore copies the committed generation's chunk store to name.
func (r *repairer) copyStore(name string) error {
	s, err := openGeneration(r.d, r.man, *inspectOptions(r.fsys, nil))
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := r.d.File(name)
	if err != nil {
		return err
	}
	c, err := s.CompactTo(p)
	if err != nil {
		return err
	}
	return c.Close()
}

// emptyStore creates a store with no chunks, for EmptyChunks.
func (r *repairer) emptyStore(name string) (*chunkstore.Store, error) {
	cfg, ok := r.known()
	if !ok {
		return nil, errUnknown
	}
	cfg.FS, cfg.PixelSize = r.fsys, 4
	p, err := r.d.File(name)
	if err != nil {
		return nil, err
	}
	s, err := chunkstore.Create(p, &cfg)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	return s, nil
}

// lossKey names a chunk's pixels or its body set.
type lossKey struct {
	key    chunkstore.Key
	bodies bool
}

// losses collects what a repair lists as dropped or reverted, once per
// chunk or body set.
type losses struct {
	dropped, reverted map[lossKey]string
}

func (l *losses) listed(k lossKey) bool {
	_, d := l.dropped[k]
	_, v := l.reverted[k]
	return d || v
}

func (l *losses) drop(k lossKey, why string) {
	if !l.listed(k) {
		l.dropped[k] = why
	}
}

func (l *losses) revert(k lossKey, why string) {
	delete(l.dropped, k)
	l.reverted[k] = why
}

// sorted returns m's losses in page-table order.
func sortedLosses(m map[lossKey]string) []Loss {
	out := make([]Loss, 0, len(m))
	for k, why := range m {
		out = append(out, Loss{Pos: k.key.Pos(), Key: k.key, Bodies: k.bodies, Reason: why})
	}
	slices.SortFunc(out, func(a, b Loss) int {
		if c := compareKey(a.Key, b.Key); c != 0 {
			return c
		}
		if a.Bodies == b.Bodies {
			return 0
		}
		if a.Bodies {
			return 1
		}
		return -1
	})
	return out
}

// fillSources opens, read-only, the copy of the committed generation's
// chunk store made for its backup, when there is one, and the chunk store
// generation of every backup, newest first, for a repair to take lost
// chunks from; one that does not open is left out.
func (r *repairer) fillSources() ([]*chunkstore.Store, []string) {
	var stores []*chunkstore.Store
	var names []string
	if ref := r.d.PendingCopy(); ref != nil && r.man != nil {
		// The copy of the committed generation's store made for its backup:
		// the generation's own chunks, first.
		if s, err := openGeneration(r.d, &savedir.Manifest{Generation: r.man.Generation, Chunks: *ref}, *inspectOptions(r.fsys, nil)); err == nil {
			r.ownCopy = map[chunkstore.Key]bool{}
			storetool.Tool.Entries(s, func(e storetool.Entry) bool {
				if e.Type != chunkstore.BodyBlock {
					r.ownCopy[e.Key] = true
				}
				return true
			})
			stores = append(stores, s)
			names = append(names, fmt.Sprintf("the copy of generation %d's (in %s)", r.man.Generation, ref.Name))
		}
	}
	for _, b := range r.backups {
		s, err := openGeneration(r.d, b, *inspectOptions(r.fsys, nil))
		if err != nil {
			continue
		}
		stores = append(stores, s)
		names = append(names, fmt.Sprintf("backup %d's (in %s)", b.Generation, b.Chunks.Name))
	}
	return stores, names
}

// wouldFill says, for a dry run, what CompactToFilling would take from the
// backups' stores: chunks whose record is damaged, and those missing
// accepts that src does not hold.
func wouldFill(src *chunkstore.Store, fills []*chunkstore.Store, damaged map[lossKey]bool, missing func(chunkstore.Key) bool) []storetool.Filled {
	has := map[lossKey]bool{}
	storetool.Tool.Entries(src, func(e storetool.Entry) bool {
		has[lossKey{e.Key, e.Type == chunkstore.BodyBlock}] = true
		return true
	})
	var out []storetool.Filled
	taken := map[lossKey]bool{}
	for i, f := range fills {
		storetool.Tool.Entries(f, func(e storetool.Entry) bool {
			k := lossKey{e.Key, e.Type == chunkstore.BodyBlock}
			if k.bodies {
				return true // body sets are never taken from a backup
			}
			if !e.Handle.IsZero() {
				if _, err := storetool.Tool.RecordInfo(f, e.Handle); err != nil {
					return true // damaged there too
				}
			}
			if !taken[k] && (damaged[k] || !has[k] && missing != nil && missing(k.key)) {
				taken[k] = true
				out = append(out, storetool.Filled{Pos: e.Pos, Key: e.Key, From: i, Damaged: damaged[k]})
			}
			return true
		})
	}
	return out
}

// scanLoss is what a forward scan of a store whose page table was rebuilt
// says the damage took.
type scanLoss struct {
	gen       uint64           // the store generation the repair reads
	lastTable uint64           // the newest intact page-table record before the loss; 0 if none
	after     map[lossKey]bool // intact records after that table
	lostFrom  int64            // where the generation's records start to be lost; -1 if none are
	cut       *lossKey         // the last intact record before lostFrom, when no table precedes it
	damaged   []damagedRecord  // records whose header still names their chunk
	lostBytes int64            // damaged bytes without a readable record header
}

type damagedRecord struct {
	k   lossKey
	off int64
}

// scanLoss scans the store file the repair reads, up to the committed
// generation's page table.
func (r *repairer) scanLoss(src *chunkstore.Store) *scanLoss {
	l := &scanLoss{after: map[lossKey]bool{}, lostFrom: -1}
	bound := int64(-1)
	if ri, err := storetool.Tool.ParseRoot(src.Root()); err == nil {
		l.gen = ri.Generation
		if ri.Table > 0 {
			bound = ri.Table
		}
	}
	store, err := r.d.File(r.rep.Store.File)
	if err != nil {
		return l
	}
	headerless := int64(-1) // the first damaged stretch without a header after the last table
	var last *lossKey       // the last intact chunk or body record
	var cut *lossKey        // last when the first headerless stretch was met
	_ = storetool.Tool.Scan(r.fsys, store, func(rec storetool.ScanRecord) bool {
		if bound >= 0 && rec.Handle.Offset >= bound {
			return false
		}
		var k lossKey
		switch rec.Kind {
		case storetool.RecordFull, storetool.RecordDelta, storetool.RecordPalette:
			k = lossKey{rec.Key, false}
		case storetool.RecordBodies:
			k = lossKey{rec.Key, true}
		case storetool.RecordJournal, storetool.RecordCheckpoint:
			if rec.Err == nil {
				l.lastTable, headerless, last, cut = rec.Generation, -1, nil, nil
				clear(l.after)
			}
			return true
		default:
			l.lostBytes += int64(rec.Handle.Length)
			if headerless < 0 {
				headerless, cut = rec.Handle.Offset, last
			}
			return true
		}
		if rec.Err != nil {
			l.damaged = append(l.damaged, damagedRecord{k, rec.Handle.Offset})
			return true
		}
		l.after[k] = true
		if headerless < 0 {
			kk := k
			last = &kk
		}
		return true
	})
	// Records of the generation are lost when the file ends before its
	// page table, or where bytes without a header lie after the last
	// intact table.
	l.lostFrom, l.cut = headerless, cut
	if end := storeEnd(r.fsys, store, bound); bound >= 0 && end < bound && (l.lostFrom < 0 || end < l.lostFrom) {
		l.lostFrom, l.cut = end, last
	}
	return l
}

// storeEnd returns where the file of the store file store that holds the
// store offset bound (a generation's page table) ends, when it ends
// before bound (at its start when it is missing); else bound.
func storeEnd(fsys vfs.FS, store string, bound int64) int64 {
	if bound < 0 {
		return bound
	}
	// An earlier data file may be gone on purpose (a compaction emptied
	// it): only the file of the table tells a cut.
	last := storetool.Handle{Offset: bound}.File()
	p := store
	if last != 0 {
		p = storetool.Tool.DataFileName(store, last)
	}
	size := fileSize(fsys, p)
	if last != 0 && size == 0 {
		return storetool.Tool.StoreOffset(last, 0)
	}
	return min(bound, storetool.Tool.StoreOffset(last, size))
}

// missing returns which chunks the store may have lost, for
// CompactToFilling to take from the backups: none when nothing was lost or
// an intact page table before the loss says exactly what the store held
// (a chunk it does not name was removed on purpose); else those that sort
// after the last record before the loss (compactions and commits write
// records in page-table order, so the chunks before it are all there).
func (l *scanLoss) missing() func(chunkstore.Key) bool {
	if l == nil || l.lostFrom < 0 || l.lastTable > 0 {
		return nil
	}
	cut := l.cut
	return func(k chunkstore.Key) bool { return cut == nil || compareKey(k, cut.key) > 0 }
}

// missing says which chunks the store lacks that the repair takes from
// the stores it fills from: those loss.missing accepts and, when records
// of the generation were lost and the generation's own copy of its store
// is there, every chunk that copy holds (each was the generation's).
func (r *repairer) missing(loss *scanLoss) func(chunkstore.Key) bool {
	m := loss.missing()
	if r.ownCopy == nil || loss == nil || loss.lostFrom < 0 {
		return m
	}
	own := r.ownCopy
	return func(k chunkstore.Key) bool { return own[k] || m != nil && m(k) }
}

// compareKey orders keys as the page table does: the last axis first.
func compareKey(a, b chunkstore.Key) int {
	for i := max(a.Axes(), b.Axes()) - 1; i >= 0; i-- {
		if c := cmp.Compare(a.Axis(i), b.Axis(i)); c != 0 {
			return c
		}
	}
	return 0
}

// classify lists the chunks and body sets that read differently after the
// repair: live records that compaction dropped (fixed; nil on a dry run:
// the checker's findings instead); chunks taken from a backup's store
// (filled); and, when the index was rebuilt by a scan (loss), the damaged
// records whose position now reads an older record or none, and, when
// records of the generation were lost with the file's tail (or in bytes
// without a readable header), every chunk that is not known to be the
// generation's own version.
func (r *repairer) classify(src, fixed *chunkstore.Store, filled []storetool.Filled, fills []*chunkstore.Store, fillNames []string, loss *scanLoss) {
	l := &losses{dropped: map[lossKey]string{}, reverted: map[lossKey]string{}}
	defer func() {
		r.rep.Dropped = append(r.rep.Dropped, sortedLosses(l.dropped)...)
		r.rep.Reverted = append(r.rep.Reverted, sortedLosses(l.reverted)...)
	}()
	live := map[lossKey]storetool.Handle{}
	storetool.Tool.Entries(src, func(e storetool.Entry) bool {
		live[lossKey{e.Key, e.Type == chunkstore.BodyBlock}] = e.Handle
		return true
	})
	var problems []chunkstore.Problem
	if fixed != nil {
		problems = fixed.OpenReport().Problems
	} else {
		problems = src.Check().Problems
	}
	damaged := r.dropDamaged(l, live, problems)
	if fixed == nil {
		filled = wouldFill(src, fills, damaged, r.missing(loss))
	}
	filledMissing := r.revertFilled(l, filled, fillNames, loss)
	if loss == nil {
		return
	}
	r.classifyScanDamage(l, live, damaged, loss)
	if loss.lostBytes > 0 {
		r.note("%d damaged bytes of the chunk store have no readable record header: what they held, if anything live, is lost", loss.lostBytes)
	}
	if loss.lostFrom >= 0 && loss.gen > 0 {
		kept := src
		if fixed != nil {
			kept = fixed
		}
		r.classifyLostTail(l, kept, fills, fillNames, loss)
	}
	r.noteUnnamed(l, src, live, filledMissing)
}

// dropDamaged lists as dropped every live record a problem of the store
// is about, and returns them.
func (r *repairer) dropDamaged(l *losses, live map[lossKey]storetool.Handle, problems []chunkstore.Problem) map[lossKey]bool {
	damaged := map[lossKey]bool{}
	for _, p := range problems {
		if p.Key == nil {
			continue
		}
		for _, bodies := range []bool{false, true} {
			k := lossKey{*p.Key, bodies}
			if h, ok := live[k]; ok && r.isAt(h, p) {
				damaged[k] = true
				l.drop(k, fmt.Sprintf("its record at %s is damaged", r.where(h)))
			}
		}
	}
	return damaged
}

// revertFilled lists as reverted every chunk taken from a store the
// repair fills from, and returns how many of them the store had lost (not
// damaged).
func (r *repairer) revertFilled(l *losses, filled []storetool.Filled, fillNames []string, loss *scanLoss) int {
	filledMissing := 0
	for _, f := range filled {
		k := lossKey{f.Key, false}
		if f.Damaged {
			l.revert(k, fmt.Sprintf("its record in %s is damaged; %s version is used", r.rep.Store.File, fillNames[f.From]))
			continue
		}
		filledMissing++
		l.revert(k, fmt.Sprintf("lost from %s with the records after %s; %s version is used", r.rep.Store.File, r.where(storetool.Handle{Offset: loss.lostFrom}), fillNames[f.From]))
	}
	return filledMissing
}

// classifyScanDamage lists the damaged records the scan found: a damaged
// record of the generation may have been its chunk's newest.
func (r *repairer) classifyScanDamage(l *losses, live map[lossKey]storetool.Handle, damaged map[lossKey]bool, loss *scanLoss) {
	for _, d := range loss.damaged {
		h, ok := live[d.k]
		switch {
		case damaged[d.k] || l.listed(d.k):
		case !ok:
			damaged[d.k] = true
			l.drop(d.k, fmt.Sprintf("its record at %s is damaged and no older one is intact", r.where(storetool.Handle{Offset: d.off})))
		case h.Offset < d.off:
			damaged[d.k] = true
			l.revert(d.k, fmt.Sprintf("its record at %s is damaged; an older one at %s is used", r.where(storetool.Handle{Offset: d.off}), r.where(h)))
		}
	}
}

// classifyLostTail lists what lost records of the generation may have
// held: any chunk of kept (the store as the repair leaves it) may have had
// a newer record there; only the records found after the previous
// generation's table are the generation's own.
func (r *repairer) classifyLostTail(l *losses, kept *chunkstore.Store, fills []*chunkstore.Store, fillNames []string, loss *scanLoss) {
	own := loss.lastTable+1 == loss.gen
	since := fmt.Sprintf("of store generation %d or older", loss.lastTable)
	if loss.lastTable == 0 {
		since = "written before that point"
	}
	lostAt := r.where(storetool.Handle{Offset: loss.lostFrom})
	has := map[lossKey]bool{}
	kept.Entries(func(e chunkstore.Entry) bool {
		k := lossKey{e.Key, e.Type == chunkstore.BodyBlock}
		has[k] = true
		if !l.listed(k) && !(own && loss.after[k]) {
			l.revert(k, fmt.Sprintf("the records of %s after %s are lost: this is its newest surviving version, %s, which may be older than the one saved",
				r.rep.Store.File, lostAt, since))
		}
		return true
	})
	// A body set none of whose records survived leaves no trace in the
	// store (bodies are never taken from a backup); the newest store the
	// repair fills from (the generation's own copy, else the newest
	// backup's) names the chunks that had one, which may have been lost.
	if len(fills) == 0 {
		return
	}
	fills[0].Entries(func(e chunkstore.Entry) bool {
		if k := (lossKey{e.Key, true}); e.Type == chunkstore.BodyBlock && !has[k] {
			l.drop(k, fmt.Sprintf("the records of %s after %s are lost, and no version of its bodies survived (%s store held some): they may be lost",
				r.rep.Store.File, lostAt, fillNames[0]))
		}
		return true
	})
}

// noteUnnamed notes the chunks the generation's header counts that the
// repair found no trace of, not even a damaged record.
func (r *repairer) noteUnnamed(l *losses, src *chunkstore.Store, live map[lossKey]storetool.Handle, filledMissing int) {
	if r.rep.Store.Root == nil {
		return
	}
	ri, err := storetool.Tool.ParseRoot(r.rep.Store.Root)
	if err != nil {
		return
	}
	found := storetool.Tool.Stats(src).Chunks
	gone := 0
	for k := range l.dropped {
		if _, in := live[k]; !in && !k.bodies {
			gone++
		}
	}
	if missing := int(ri.Chunks) - found - gone - filledMissing; missing > 0 {
		r.note("generation %d of %s stored %d chunks and %d were found: %s, written after the point of damage, left no trace to name them by and regenerate",
			ri.Generation, r.rep.Store.File, ri.Chunks, found+filledMissing, plural(missing, "chunk", "chunks"))
	}
}

// isAt reports whether problem p of the store the repair reads is about
// the record at h: the same file (the store file, or the data file that
// holds the record) and offset.
func (r *repairer) isAt(h storetool.Handle, p chunkstore.Problem) bool {
	file := ""
	if h.File() != 0 {
		file = storetool.Tool.DataFileName(r.rep.Store.File, h.File())
	}
	return p.Offset == h.FileOffset() && (p.File == file || file == "" && p.File == r.rep.Store.File)
}

// where names the place of a record of the store the repair reads.
func (r *repairer) where(h storetool.Handle) string { return offsetIn(r.rep.Store.File, h.Offset) }

// offsetIn names a store offset of the store file store: "offset N" in the
// store file itself, "offset N of <data file>" in a data file.
func offsetIn(store string, off int64) string {
	h := storetool.Handle{Offset: off}
	if h.File() == 0 {
		return fmt.Sprintf("offset %d", off)
	}
	return fmt.Sprintf("offset %d of %s", h.FileOffset(), storetool.Tool.DataFileName(store, h.File()))
}

func countsOf(s *chunkstore.Store) Counts {
	st := storetool.Tool.Stats(s)
	c := Counts{Chunks: st.Chunks, Empty: st.Empty, Delta: st.Delta, Full: st.Full, Palette: st.Palette, BodyBlocks: st.BodyBlocks}
	s.Entries(func(e chunkstore.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			b, _ := s.EntitiesKey(e.Key)
			c.Bodies += len(b.Bodies)
		}
		return true
	})
	return c
}

// repairBackups keeps, rewrites or drops each backup.
func (r *repairer) repairBackups() error {
	for _, p := range r.d.DamagedBackups() {
		g, err := strconv.ParseUint(strings.TrimPrefix(path.Base(p.File), "manifest-"), 10, 64)
		if err != nil {
			continue
		}
		r.rep.BackupsDropped = append(r.rep.BackupsDropped, DroppedBackup{Generation: g, Reason: fmt.Sprintf("its manifest is damaged: %v", p.Err)})
		if !r.o.DryRun {
			if err := r.d.DropBackup(g); err != nil {
				return err
			}
		}
	}
	for _, b := range r.backups {
		switch {
		case r.damaged[b.World.Name]:
			if err := r.dropBackup(b, "its world file is damaged"); err != nil {
				return err
			}
		case b.Players != nil && (r.damaged[b.Players.Index.Name] || r.damaged[b.Players.Data]) && r.playersDamaged(b) != nil:
			// A players data file is shared by the generations that append
			// to it: only a backup whose own players are damaged goes.
			if err := r.dropBackup(b, fmt.Sprintf("its players are damaged: %v", r.playersDamaged(b))); err != nil {
				return err
			}
		case !r.damaged[b.Chunks.Name]:
			r.rep.BackupsKept = append(r.rep.BackupsKept, b.Generation)
		default:
			if err := r.rewriteBackup(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// playersDamaged returns why the players generation m names are damaged:
// its index, or the first record of them that does not read as an intact
// entity section; nil when they are intact.
func (r *repairer) playersDamaged(m *savedir.Manifest) error {
	p, err := r.d.ReadPlayers(m)
	if err != nil {
		return err
	}
	for _, e := range p.Entries {
		if _, err := r.intactPlayer(p, e.ID); err != nil {
			return err
		}
	}
	return nil
}

// intactPlayer returns the entity section of player id in p when its
// record is intact and reads as one.
func (r *repairer) intactPlayer(p *savedir.Players, id string) ([]byte, error) {
	sec, err := r.d.ReadPlayer(p, id)
	if err == nil {
		err = checkStoredPECS(sec)
	}
	return sec, err
}

func (r *repairer) dropBackup(b *savedir.Manifest, why string) error {
	r.rep.BackupsDropped = append(r.rep.BackupsDropped, DroppedBackup{Generation: b.Generation, Reason: why})
	if r.o.DryRun {
		return nil
	}
	return r.d.DropBackup(b.Generation)
}

// rewriteBackup copies a backup's store generation out of a damaged file
// into one of its own, or drops the backup when that generation itself is
// damaged.
func (r *repairer) rewriteBackup(b *savedir.Manifest) error {
	s, err := openGeneration(r.d, b, *inspectOptions(r.fsys, nil))
	if err != nil {
		return r.dropBackup(b, fmt.Sprintf("its chunk store generation does not open: %v", err))
	}
	defer s.Close()
	if r.o.DryRun {
		if rep := s.Check(); hasLiveDamage(rep) {
			return r.dropBackup(b, "records of its chunk store generation are damaged")
		}
		r.rep.BackupsRewritten = append(r.rep.BackupsRewritten, b.Generation)
		return nil
	}
	gen := max(r.newGen, r.d.Generation())
	var name, p string
	for i := 1; ; i++ { // a name no file has, should an earlier repair have taken it
		name = savedir.BackupChunksName(gen, b.Generation, i)
		if p, err = r.d.File(name); err != nil {
			return err
		}
		if _, err := r.fsys.Lstat(p); err != nil {
			break
		}
	}
	c, err := s.CompactTo(p)
	if err != nil {
		_ = removeStore(r.d, name)
		return r.dropBackup(b, fmt.Sprintf("its chunk store generation cannot be copied: %v", err))
	}
	defer c.Close()
	if !c.OpenReport().OK() {
		c.Close()
		_ = removeStore(r.d, name)
		return r.dropBackup(b, "records of its chunk store generation are damaged")
	}
	nb := *b
	nb.Version = savedir.ManifestVersion
	nb.Chunks = savedir.StoreRef{Name: name, Generation: c.Generation(), Root: c.Root(), Data: storetool.Tool.DataFileNames(c)}
	if err := r.d.ReplaceBackup(&nb); err != nil {
		return err
	}
	r.rep.BackupsRewritten = append(r.rep.BackupsRewritten, b.Generation)
	return nil
}

// hasLiveDamage reports whether a check found a damaged record that the
// checked generation uses.
func hasLiveDamage(rep chunkstore.Report) bool {
	for _, p := range rep.Problems {
		if p.Section == chunkstore.SectionChunk || p.Section == chunkstore.SectionBodies || p.Section == chunkstore.SectionTable {
			return true
		}
	}
	return false
}

// plural says n things: "1 chunk is", "2 chunks are".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
