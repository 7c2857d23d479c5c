package savedir

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
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
// root and verified (storetool's Verify: every data file it uses, its page
// table, the checksums of every live record, each read once; nothing is
// decoded, which is what makes a load of 10,000 chunks cost tens of
// milliseconds rather than hundreds). Each problem names its file.
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
	next := "fix the cause (the disk, the permissions) and load again"
	if errors.Is(err, chunkstore.ErrConfigMismatch) {
		// The save is intact but not the game's (another chunk or pixel
		// size, seed or generator): the error says what to run.
		next = "the save was written with other settings than the game's, as said before"
	}
	return fmt.Errorf("%w: generation %d: %s: %w; that is not damage, so no backup was loaded and nothing was changed: %s",
		autosave.ErrUnreadable, gen, file, err, next)
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
	probs := append(s.OpenReport().Problems, storetool.Tool.Verify(s).Problems...)
	dir := ""
	if i := strings.LastIndexByte(ref.Name, '/'); i >= 0 {
		dir = ref.Name[:i+1]
	}
	named := map[string]string{} // base names of the data files ref names, mirrors included
	for _, n := range ref.Data {
		named[path.Base(n)] = n
	}
	for i := range probs {
		if probs[i].File == "" {
			probs[i].File = ref.Name
		} else if n, ok := named[probs[i].File]; ok {
			probs[i].File = n
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
	if o, err = d.mirroredDataPaths(ref, o); err != nil {
		return nil, err
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
	if mm := d.withMirrors(m, probs); mm != nil {
		candidates = append([]*Manifest{mm}, candidates...)
	}
	for _, b := range candidates {
		if d.ReadOnly() != nil {
			break // nothing can be committed
		}
		bw, b, err := d.verifyCandidate(b, validate)
		if errors.Is(err, autosave.ErrUnreadable) {
			// Not damage: an older backup would lose what this one holds.
			return nil, nil, fmt.Errorf("autosave: generation %d of %s is damaged (%s), and generation %d, the newest that could replace it, could not be read: %w",
				m.Generation, d.path, words.FirstThree(probs), b.Generation, err)
		}
		if err != nil || bw == nil {
			continue
		}
		gen, err := d.fallBackTo(b, bw)
		if err != nil {
			return nil, nil, fmt.Errorf("autosave: fall back to backup generation %d: %w", b.Generation, err)
		}
		// The new generation's files get their mirrors now, not at the
		// next save: a failure here costs only that wait.
		if players, err := d.ReadPlayers(nil); err == nil {
			_, _ = d.mirror(d.Manifest(), players)
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

// verifyCandidate verifies generation b, which could replace a damaged
// one, and returns its world file and b itself when it is intact; when it
// is damaged, b with the mirrors of its damaged files in their place
// (withMirrors) when that is intact; else a nil world. An error is what
// VerifyGeneration returns for b (one reading the mirrors is damage of
// theirs, not b's).
func (d *Dir) verifyCandidate(b *Manifest, validate func(world []byte) error) ([]byte, *Manifest, error) {
	world, probs, err := d.VerifyGeneration(b, validate)
	if err != nil || len(probs) == 0 {
		return world, b, err
	}
	if mb := d.withMirrors(b, probs); mb != nil {
		if world, probs, err := d.VerifyGeneration(mb, validate); err == nil && len(probs) == 0 {
			return world, mb, nil
		}
	}
	return nil, b, nil
}

// withMirrors returns generation m with the mirrors (MirrorName) of its
// damaged files in their place, probs being the damage VerifyGeneration
// found in it: each data file, players index or players data file a
// problem names, when it has a mirror; when the chunk store as a whole
// could not be opened (a problem naming its store file), every data file
// whose mirror is at least as long as the file (or the file is missing),
// and the store file's mirror when the store file is missing. A mirror
// holds what the generations committed before it was last grown use of its
// file, at the same offsets. It returns nil when no mirror would be used.
// The result is for verifying and falling back only: no manifest names a
// mirror (fallBackTo copies what it reads from them).
func (d *Dir) withMirrors(m *Manifest, probs []chunkstore.Problem) *Manifest {
	damaged := map[string]bool{}
	for _, p := range probs {
		damaged[p.File] = true
	}
	own, used := *m, false
	whole := damaged[m.Chunks.Name]
	own.Chunks.Data = slices.Clone(m.Chunks.Data)
	for i, name := range m.Chunks.Data {
		mirror, live := d.sizeOf(MirrorName(name)), d.sizeOf(name)
		if mirror >= 0 && (damaged[name] || whole && mirror >= live) {
			own.Chunks.Data[i], used = MirrorName(name), true
		}
	}
	if whole && d.sizeOf(m.Chunks.Name) < 0 && d.sizeOf(MirrorName(m.Chunks.Name)) >= 0 {
		own.Chunks.Name, used = MirrorName(m.Chunks.Name), true
	}
	if p := m.Players; p != nil && !isCopiedPlayers(p) {
		pr := *p
		if damaged[p.Index.Name] && d.sizeOf(MirrorName(p.Index.Name)) >= 0 {
			pr.Index.Name, used = MirrorName(p.Index.Name), true
		}
		if damaged[p.Data] && d.sizeOf(MirrorName(p.Data)) >= 0 {
			pr.Data, used = MirrorName(p.Data), true
		}
		own.Players = &pr
	}
	if !used {
		return nil
	}
	return &own
}

// sizeOf returns the size of the regular file rel of the directory, or -1
// when it is missing or not a regular file.
func (d *Dir) sizeOf(rel string) int64 {
	p, err := d.file(rel)
	if err != nil {
		return -1
	}
	fi, err := d.fs.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// mirroredDataPaths returns o set to read the data files of ref from the
// paths ref names for them, when ref names a mirror (withMirrors) for its
// store file or one of its data files; else o as it is.
func (d *Dir) mirroredDataPaths(ref StoreRef, o chunkstore.Options) (chunkstore.Options, error) {
	_, mirrored := MirroredName(ref.Name)
	for _, n := range ref.Data {
		_, isMirror := MirroredName(n)
		mirrored = mirrored || isMirror
	}
	if !mirrored {
		return o, nil
	}
	paths := map[uint32]string{}
	for _, name := range ref.Data {
		live := name
		if l, ok := MirroredName(name); ok {
			live = l
		}
		_, n, ok := DataFileOf(live)
		if !ok {
			return o, fmt.Errorf("%w: %q is not a data file's name", autosave.ErrCorrupt, name)
		}
		p, err := d.file(name)
		if err != nil {
			return o, err
		}
		paths[n] = p
	}
	return storetool.Tool.WithDataPaths(o, paths), nil
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
