package savedir

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
)

// damagesGeneration reports whether a problem a chunk store's check or
// open found concerns what the generation uses: a data file it needs, its
// page table, a live chunk or body record. A damaged header slot of
// another generation, or damaged bytes no entry uses, do not.
func damagesGeneration(p chunkstore.Problem) bool {
	switch p.Section {
	case chunkstore.SectionFile, chunkstore.SectionTable, chunkstore.SectionChunk, chunkstore.SectionBodies:
		return true
	}
	return false
}

// VerifyGeneration reads generation m of the directory as a load uses it
// and returns its world file and the damage found: the world file (size,
// CRC32-C, then validate when not nil), the players index and every
// player's record, and the chunk store generation, opened through its
// root and read whole (chunkstore.Store.Check: every data file it uses,
// its page table, every live record decoded). Each problem names its file.
// Only proven damage is a problem (a codec's ErrCorrupt: a checksum, a
// bound, a bad name; or a file the manifest names that is missing). The
// error is for what is not damage: a file that could not be read (an I/O
// error, a permission: see [ErrUnreadable]), or validate's verdict on an
// intact world file that does not match the game
// (archetype.ErrIncompatible), say. Nothing is changed.
func (d *Dir) VerifyGeneration(m *Manifest, validate func(world []byte) error) ([]byte, []chunkstore.Problem, error) {
	var probs []chunkstore.Problem
	var readErr error
	bad := func(file, section string, err error) {
		switch {
		case !isDamage(err):
			if readErr == nil {
				readErr = unreadable(m.Generation, file, err)
			}
		case !errors.Is(err, errs.Corrupt):
			err = fmt.Errorf("%w: %w", autosave.ErrCorrupt, err)
			fallthrough
		default:
			probs = append(probs, chunkstore.Problem{File: file, Section: section, Offset: -1, Err: err})
		}
	}
	world, err := d.ReadWorld(m)
	switch {
	case err != nil:
		bad(m.World.Name, "world file", err)
	case validate != nil:
		if err := validate(world); errors.Is(err, errs.Corrupt) {
			bad(m.World.Name, "world file", err)
		} else if err != nil {
			return nil, nil, err
		}
	}
	if m.Players != nil {
		players, err := d.ReadPlayers(m)
		if err != nil {
			bad(m.Players.Index.Name, "players", err)
		} else {
			for _, id := range players.IDs() {
				if _, err := d.ReadPlayer(players, id); err != nil {
					bad(m.Players.Data, "players", err)
				}
			}
		}
	}
	if readErr == nil {
		for _, p := range d.checkStore(m.Chunks) {
			if damagesGeneration(p) {
				bad(p.File, p.Section, p.Err)
			}
		}
	}
	if readErr != nil {
		return nil, nil, readErr
	}
	return world, probs, nil
}

// isDamage reports whether err, met reading a file a generation uses, is
// proven damage: a codec's ErrCorrupt, or the file is missing. Any other
// error (EIO, EACCES, a store that is not available) says nothing of the
// bytes.
func isDamage(err error) bool {
	return errors.Is(err, errs.Corrupt) || errors.Is(err, fs.ErrNotExist)
}

// unreadable is the error of a load that could not read file of
// generation gen for a reason that is not damage.
func unreadable(gen uint64, file string, err error) error {
	return fmt.Errorf("%w: generation %d: %s: %w; that is not damage, so no backup was loaded and nothing was changed: fix the cause (the disk, the permissions) and load again",
		autosave.ErrUnreadable, gen, file, err)
}

// checkStore opens the chunk store generation ref names, read-only and
// without the game's generator, and checks it: what opening it skipped and
// what its check finds, each problem naming its file relative to the
// directory.
func (d *Dir) checkStore(ref StoreRef) []chunkstore.Problem {
	s, err := d.openStoreRef(ref)
	if err != nil {
		return []chunkstore.Problem{{File: ref.Name, Section: chunkstore.SectionFile, Offset: -1, Err: err}}
	}
	defer s.Close()
	probs := append(s.OpenReport().Problems, s.Check().Problems...)
	dir := ""
	if i := strings.LastIndexByte(ref.Name, '/'); i >= 0 {
		dir = ref.Name[:i+1]
	}
	for i := range probs {
		if probs[i].File == "" {
			probs[i].File = ref.Name
		} else if !strings.Contains(probs[i].File, "/") {
			probs[i].File = dir + probs[i].File
		}
	}
	return probs
}

// openStoreRef opens the chunk store generation ref names, read-only, for
// inspection: through its root, or for a manifest of format 1 through the
// header slot that holds its generation.
func (d *Dir) openStoreRef(ref StoreRef) (*chunkstore.Store, error) {
	p, err := d.file(ref.Name)
	if err != nil {
		return nil, err
	}
	if _, err := d.fs.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: chunk store %s named by the manifest is missing", autosave.ErrCorrupt, ref.Name)
		}
		return nil, err
	}
	o := chunkstore.Options{FS: d.fs, ReadOnly: true, Root: ref.Root}
	if len(ref.Root) == 0 {
		o.Generation = ref.Generation
	}
	s, err := chunkstore.Open(p, &o)
	if err != nil && !errors.Is(err, errs.Corrupt) && errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w: %w", autosave.ErrCorrupt, err) // a data file it names is lost
	}
	return s, err
}

// LoadIntact returns the world file of the newest intact generation, for a
// load. The committed generation is verified first (VerifyGeneration).
// When it is damaged, the committed generation with the copies of its
// chunk store and of its players that the writer made for its backup (when
// there are, and its other files are intact), then the backups, newest
// first, are tried; the first intact one becomes current again as a new
// generation: its chunk store is copied into a new chunk store
// (chunks-<G>.pxsw, so that no backup's files are ever written to), its
// world file written, its players named (or, when they are a backup's own
// copy, copied into players-<G>.pxpd and players-<G>.pxpl), and the damaged
// generation is kept as a backup whatever happened to its files. Nothing is
// removed: whether the damaged files go stays the user's choice (arksave
// repair, or the backup rotation of later saves). The returned Fallback
// says what happened; it is nil when the committed generation is intact.
//
// When no backup is intact, a generation whose world file and players
// index are intact loads as it is (its damaged chunks regenerate and its
// damaged records are reported as they are read); one whose world file or
// players index is damaged is an error wrapping ErrCorrupt that lists the
// damage and names arksave repair, and
// so is a damaged generation in a directory that cannot be written
// (nothing can be committed). A file of the committed generation that
// cannot be read for a reason that is not damage (an I/O error, a
// permission) fails the load with [ErrUnreadable], naming the file and
// wrapping the file system's error: no backup is tried and nothing is
// changed; so does such a file of the newest backup that could replace a
// damaged generation (an older one would lose what it holds). An error of validate that is not damage is returned as it is.
func (d *Dir) LoadIntact(validate func(world []byte) error) ([]byte, *autosave.Fallback, error) {
	m := d.Manifest()
	if m == nil {
		return nil, nil, d.ManifestErr()
	}
	world, probs, err := d.VerifyGeneration(m, validate)
	if err != nil || len(probs) == 0 {
		return world, nil, err
	}
	damaged := func(why string) error {
		return fmt.Errorf("%w: generation %d of %s is damaged (%s) and %s; nothing was changed: run arksave repair %s",
			autosave.ErrCorrupt, m.Generation, d.path, words.FirstThree(probs), why, d.path)
	}
	candidates := d.Backups()
	if own := d.withOwnCopies(m); own != nil {
		candidates = append([]*Manifest{own}, candidates...)
	}
	for _, b := range candidates {
		if d.ReadOnly() != nil {
			break // nothing can be committed
		}
		bw, bp, err := d.VerifyGeneration(b, validate)
		if errors.Is(err, autosave.ErrUnreadable) {
			// Not damage: an older backup would lose what this one holds.
			return nil, nil, fmt.Errorf("autosave: generation %d of %s is damaged (%s), and generation %d, the newest that could replace it, could not be read: %w",
				m.Generation, d.path, words.FirstThree(probs), b.Generation, err)
		}
		if err != nil || len(bp) > 0 {
			continue
		}
		gen, err := d.fallBackTo(b, bw)
		if err != nil {
			return nil, nil, fmt.Errorf("autosave: fall back to backup generation %d: %w", b.Generation, err)
		}
		return bw, &autosave.Fallback{Damaged: m.Generation, Loaded: b.Generation, Generation: gen, Problems: probs}, nil
	}
	if !slices.ContainsFunc(probs, func(p chunkstore.Problem) bool {
		return p.File == m.World.Name || m.Players != nil && p.File == m.Players.Index.Name
	}) {
		// No backup is intact, but the world file (and the players index)
		// is: the generation loads as it always did, each damaged chunk
		// regenerated and each damaged record (a chunk's, a player's)
		// reported when it is read.
		return world, nil, nil
	}
	if d.ReadOnly() != nil {
		return nil, nil, damaged("the directory cannot be written to fall back to a backup")
	}
	return nil, nil, damaged("no backup is intact")
}

// withOwnCopies returns generation m with the copies made for its backup
// (which the next save would have given that backup) in place of the
// files it shares: the chunk store copy (CopiedChunksName) and the players
// copy (CopiedPlayersName), each when there is one. With them the
// generation itself may be intact but for a shared file. It returns nil
// when there is no copy.
func (d *Dir) withOwnCopies(m *Manifest) *Manifest {
	c, p := d.pendingCopy(), d.pendingPlayers()
	if c == nil && (p == nil || m.Players == nil) {
		return nil
	}
	own := *m
	if c != nil {
		own.Chunks = *c
	}
	if p != nil && m.Players != nil {
		own.Players = p
	}
	return &own
}

// fallBackTo commits backup b, whose world file is world, as a new
// generation above every generation in the directory, its chunk store
// copied into a new one (and its players, when they are a backup's own
// copy), and keeps the generation it replaces as a backup.
func (d *Dir) fallBackTo(b *Manifest, world []byte) (uint64, error) {
	gen := d.HighestGeneration() + 1
	ref, err := d.copyStore(b.Chunks, CompactedChunksName(gen))
	if err != nil {
		return 0, err
	}
	players, err := d.adoptPlayers(b, gen)
	if err != nil {
		_ = d.removeStore(ref.Name)
		return 0, err
	}
	m, _, err := d.Commit(Commit{World: world, Chunks: ref, Players: players, Generation: gen, keepDamaged: true})
	if err != nil {
		_ = d.removeStore(ref.Name)
		if players != b.Players {
			_ = d.removePlayersFiles(players.Index.Name, players.Data)
		}
		return 0, err
	}
	return m.Generation, nil
}

// copyStore writes a compacted copy of the chunk store generation src
// names to the store name (relative to the directory, a name no file has)
// and returns its reference.
func (d *Dir) copyStore(src StoreRef, name string) (StoreRef, error) {
	p, err := d.file(name)
	if err != nil {
		return StoreRef{}, err
	}
	if _, err := d.fs.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return StoreRef{}, fmt.Errorf("autosave: copy chunk store to %s: the name is taken", name)
	}
	s, err := d.openStoreRef(src)
	if err != nil {
		return StoreRef{}, err
	}
	c, err := s.CompactTo(p)
	s.Close()
	if err != nil {
		return StoreRef{}, fmt.Errorf("autosave: copy chunk store %s to %s: %w", src.Name, name, err)
	}
	defer c.Close()
	return storeRefOf(name, c), nil
}

// storeRefOf returns the reference of store s, whose name (relative to
// the directory) is name: its data files named as name's siblings.
func storeRefOf(name string, s *chunkstore.Store) StoreRef {
	ref := StoreRef{Name: name, Generation: s.Generation(), Root: s.Root()}
	prefix := ""
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		prefix = name[:i+1]
	}
	for _, n := range storetool.Tool.DataFileNames(s) {
		ref.Data = append(ref.Data, prefix+n)
	}
	return ref
}
