package savedir

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/internal/storetool"
)

// MaxGeneration is the highest generation a save directory can reach. A
// manifest or a file name with a higher one is corrupt: a commit must
// always be able to add one without wrapping around.
const MaxGeneration = 1<<63 - 1

// parseGeneration parses a generation as the save format writes it: plain
// decimal digits, no sign, no leading zero, from 1 to MaxGeneration.
func parseGeneration(s string) (uint64, bool) {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	g, err := strconv.ParseUint(s, 10, 64)
	return g, err == nil && g <= MaxGeneration
}

// WorldGeneration returns G of a world file's name, "world-<G>.pecs", and
// whether name is one.
func WorldGeneration(name string) (uint64, bool) { return worldGeneration(name) }

// StoreGeneration returns the generation a chunk store's file name
// carries (0 for chunks.pxsw, G for chunks-<G>.pxsw and a repair's
// chunks-<G>-backup-<B>.pxsw), and whether name is a chunk store's.
func StoreGeneration(name string) (uint64, bool) { return storeGeneration(name) }

// PlayersGeneration returns G of a players index's name, "players-<G>.pxpl",
// and whether name is one.
func PlayersGeneration(name string) (uint64, bool) { return playersGeneration(name) }

func worldGeneration(name string) (uint64, bool) { return generationIn(name, "world-", ".pecs") }

// generationIn returns G of a name prefix+G+suffix, and whether name is one.
func generationIn(name, prefix, suffix string) (uint64, bool) {
	num, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	if num, ok = strings.CutSuffix(num, suffix); !ok {
		return 0, false
	}
	return parseGeneration(num)
}

// backupManifestGeneration returns G of a backup manifest's file name
// "manifest-<G>" (within backups/).
func backupManifestGeneration(name string) (uint64, bool) {
	num, ok := strings.CutPrefix(name, "manifest-")
	if !ok {
		return 0, false
	}
	return parseGeneration(num)
}

// storeGeneration returns the generation a chunk store's file name carries:
// 0 for "chunks.pxsw", G for "chunks-<G>.pxsw" (compacted at G) and for a
// repair's copy of a backup's store, "chunks-<G>-backup-<B>.pxsw" or
// "chunks-<G>-backup-<B>-<N>.pxsw" (N >= 2).
func storeGeneration(name string) (uint64, bool) {
	if name == ChunksName {
		return 0, true
	}
	rest, ok := strings.CutPrefix(name, "chunks-")
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutSuffix(rest, ".pxsw"); !ok {
		return 0, false
	}
	parts := strings.Split(rest, "-")
	g, ok := parseGeneration(parts[0])
	switch {
	case !ok:
		return 0, false
	case len(parts) == 1:
		return g, true
	case len(parts) < 3 || len(parts) > 4 || parts[1] != "backup":
		return 0, false
	}
	if _, ok := parseGeneration(parts[2]); !ok {
		return 0, false
	}
	if len(parts) == 4 {
		if n, ok := parseGeneration(parts[3]); !ok || n < 2 {
			return 0, false
		}
	}
	return g, true
}

// CopiedChunksName returns the name, relative to the save directory, of
// the chunk store that backed-up generation g has to itself:
// backups/chunks-<g>.pxsw, with its data files beside it
// (backups/chunks-<g>-data-<n>.pxsd). Writers before mirrors copied the
// store there after a save, so that the backup shared no file with the
// current generation; such copies still read. Only the backup manifest of
// generation g may name it.
func CopiedChunksName(g uint64) string { return BackupDir + "/" + fmt.Sprintf("chunks-%d.pxsw", g) }

// copiedStoreGeneration returns g of "backups/chunks-<g>.pxsw", and
// whether rel is one.
func copiedStoreGeneration(rel string) (uint64, bool) {
	sub, ok := strings.CutPrefix(rel, BackupDir+"/")
	if !ok {
		return 0, false
	}
	return generationIn(sub, "chunks-", ".pxsw")
}

// CopiedPlayersName returns the name, relative to the save directory, of
// the players index that backed-up generation g has to itself:
// backups/players-<g>.pxpl, whose entries point into
// CopiedPlayersDataName(g). Writers before mirrors copied the players
// there together with the chunk store, so that the backup shared no
// players file with the current generation either; such copies still
// read. Only the backup manifest of generation g may name it.
func CopiedPlayersName(g uint64) string { return BackupDir + "/" + PlayersName(g) }

// CopiedPlayersDataName returns the name, relative to the save directory,
// of the players data file that backed-up generation g has to itself,
// backups/players-<g>.pxpd: the live records of g's players, compacted.
func CopiedPlayersDataName(g uint64) string { return BackupDir + "/" + PlayersDataNameAt(g) }

// copiedPlayersGeneration returns g of a backup's own players index or
// data file, "backups/players-<g>.pxpl" or "backups/players-<g>.pxpd", and
// whether rel is one.
func copiedPlayersGeneration(rel string) (uint64, bool) {
	sub, ok := strings.CutPrefix(rel, BackupDir+"/")
	if !ok {
		return 0, false
	}
	if g, ok := generationIn(sub, "players-", ".pxpl"); ok {
		return g, true
	}
	return generationIn(sub, "players-", ".pxpd")
}

// MirrorName returns the name, relative to the save directory, of the
// redundant copy of the file name of the top level (a chunk store file,
// one of its data files, a players index or data file):
// backups/mirror-<name>. The writer grows it after each commit with what
// the committed generation uses of the file (see mirror.go); a load that
// finds the file damaged reads the copy instead. No manifest names one.
func MirrorName(name string) string { return BackupDir + "/" + mirrorPrefix + name }

// mirrorPrefix starts the base name of every mirror in backups/.
const mirrorPrefix = "mirror-"

// MirroredName returns the name of the file of the top level that the
// mirror rel copies, and whether rel is a mirror's name
// (backups/mirror-<name>, name a chunk store's, a data file's, a players
// index's or a players data file's).
func MirroredName(rel string) (string, bool) {
	name, ok := strings.CutPrefix(rel, BackupDir+"/"+mirrorPrefix)
	if !ok {
		return "", false
	}
	_, isPlayers := playersGeneration(name)
	_, isPlayersData := playersDataGeneration(name)
	if !isStoreName(name) && !isDataFileName(name) && !isPlayers && !isPlayersData {
		return "", false
	}
	return name, true
}

// isCopiedStore reports whether rel names a backup's own chunk store.
func isCopiedStore(rel string) bool {
	_, ok := copiedStoreGeneration(rel)
	return ok
}

// isStoreName reports whether name is a chunk store's file name.
func isStoreName(name string) bool {
	_, ok := storeGeneration(name)
	return ok
}

// DataFileOf returns the chunk store a data file's name belongs to and the
// data file's number, and whether name is a data file's name: data file n
// of chunks.pxsw is chunks-data-<n>.pxsd, of chunks-<G>.pxsw
// chunks-<G>-data-<n>.pxsd (storetool.Tool.DataFileName), n from 1 to
// chunkstore.MaxDataFiles in plain decimal.
func DataFileOf(name string) (store string, n uint32, ok bool) {
	store, n, ok = storetool.Tool.ParseDataFileName(name)
	if !ok || !isStoreName(store) || storetool.Tool.DataFileName(store, n) != name {
		return "", 0, false
	}
	return store, n, true
}

// dataFileOf is DataFileOf for any name a manifest's chunks.data may hold:
// also the data files of a backup's own store,
// backups/chunks-<g>-data-<n>.pxsd.
func dataFileOf(rel string) (store string, n uint32, ok bool) {
	if store, n, ok = DataFileOf(rel); ok {
		return store, n, true
	}
	store, n, ok = storetool.Tool.ParseDataFileName(rel)
	if !ok || !isCopiedStore(store) || storetool.Tool.DataFileName(store, n) != rel {
		return "", 0, false
	}
	return store, n, true
}

func isDataFileName(name string) bool {
	_, _, ok := DataFileOf(name)
	return ok
}

// checkDataNames checks the data files a manifest names for its store: each
// one of the store's, in ascending number order, and among them the one
// that holds the root's page table.
func checkDataNames(m *Manifest) error {
	ref := m.Chunks
	if len(ref.Data) > 0 && m.Version < manifestVersionData {
		return fmt.Errorf("%w: manifest of generation %d: chunks.data in a manifest of version %d", autosave.ErrCorrupt, m.Generation, m.Version)
	}
	last := uint32(0)
	for i, name := range ref.Data {
		store, n, ok := dataFileOf(name)
		switch {
		case !ok || store != ref.Name:
			return fmt.Errorf("%w: manifest of generation %d: chunks.data[%d] %q is not a data file of %s", autosave.ErrCorrupt, m.Generation, i, name, ref.Name)
		case n <= last:
			return fmt.Errorf("%w: manifest of generation %d: chunks.data[%d] %q is out of order", autosave.ErrCorrupt, m.Generation, i, name)
		}
		last = n
	}
	if len(ref.Root) > 0 && m.Version >= manifestVersionData {
		if ri, err := storetool.Tool.ParseRoot(ref.Root); err == nil {
			if n := (storetool.Handle{Offset: ri.Table}).File(); n != 0 && !slices.Contains(ref.Data, storetool.Tool.DataFileName(ref.Name, n)) {
				return fmt.Errorf("%w: manifest of generation %d: the chunk store root's page table is in data file %d, which chunks.data does not name",
					autosave.ErrCorrupt, m.Generation, n)
			}
		}
	}
	return nil
}

// formName reports whether rel, a slash-separated name relative to a save
// directory, is one the save format uses: the manifest, the lock file, a
// world file, a chunk store or one of its data files, a players index or
// data file, a backup's manifest, world file or own chunk store and its
// data files and players files, a mirror (MirrorName), or the ".tmp" of
// any of them but the lock file.
func formName(rel string) bool {
	if rel == LockName {
		return true
	}
	rel = strings.TrimSuffix(rel, ".tmp")
	if sub, ok := strings.CutPrefix(rel, BackupDir+"/"); ok {
		_, isManifest := backupManifestGeneration(sub)
		_, isWorld := worldGeneration(sub)
		_, _, isCopyData := dataFileOf(rel)
		_, isCopyPlayers := copiedPlayersGeneration(rel)
		_, isMirror := MirroredName(rel)
		return isManifest || isWorld || isCopiedStore(rel) || isCopyData || isCopyPlayers || isMirror
	}
	_, isWorld := worldGeneration(rel)
	_, isPlayers := playersGeneration(rel)
	_, isPlayersData := playersDataGeneration(rel)
	return rel == ManifestName || rel == MetaName || rel == ThumbnailName || isWorld || isStoreName(rel) || isDataFileName(rel) || isPlayers || isPlayersData
}

// checkManifestNames checks every name a manifest holds against the form
// its field must have, and its generation: a current manifest (backup
// false) names world-<G>.pecs, a backup's names backups/world-<G>.pecs,
// and both a chunk store name (a backup's may name its own copy,
// backups/chunks-<G>.pxsw, and its data files) and, with players, a players index
// players-<g>.pxpl and data file players.pxpd or players-<g>.pxpd (g no
// later than G: an index is named again by the generations after the one
// that wrote it until a player changes; a backup's may name its own copy
// of them, backups/players-<G>.pxpl and backups/players-<G>.pxpd). Anything else, a path above or outside the
// directory included, is ErrCorrupt naming the field.
func checkManifestNames(m *Manifest, backup bool) error {
	if m.Generation < 1 || m.Generation > MaxGeneration {
		return fmt.Errorf("%w: manifest: generation %d is out of range (1 to %d)", autosave.ErrCorrupt, m.Generation, uint64(MaxGeneration))
	}
	want := WorldName(m.Generation)
	if backup {
		want = path.Join(BackupDir, want)
	}
	if m.World.Name != want {
		return fmt.Errorf("%w: manifest of generation %d: world.name %q, want %q", autosave.ErrCorrupt, m.Generation, m.World.Name, want)
	}
	if m.World.Size < 0 {
		return fmt.Errorf("%w: manifest of generation %d: world.size %d", autosave.ErrCorrupt, m.Generation, m.World.Size)
	}
	if g, copied := copiedStoreGeneration(m.Chunks.Name); copied && (!backup || g != m.Generation) {
		return fmt.Errorf("%w: manifest of generation %d: chunks.name %q is the own chunk store of backup %d",
			autosave.ErrCorrupt, m.Generation, m.Chunks.Name, g)
	} else if !copied && !isStoreName(m.Chunks.Name) {
		return fmt.Errorf("%w: manifest of generation %d: chunks.name %q is not a chunk store's name (chunks.pxsw or chunks-<generation>.pxsw)",
			autosave.ErrCorrupt, m.Generation, m.Chunks.Name)
	}
	if m.Chunks.Generation == 1<<64-1 {
		return fmt.Errorf("%w: manifest of generation %d: chunks.generation %d is out of range", autosave.ErrCorrupt, m.Generation, m.Chunks.Generation)
	}
	if err := checkDataNames(m); err != nil {
		return err
	}
	return checkPlayersRef(m, backup)
}

// file returns the path of rel, a slash-separated name relative to the
// directory, for any operation on it. It is the one way from a name to a
// path: every file operation of a Dir goes through it. It refuses, with
// ErrCorrupt, a name the save format does not use (so nothing outside the
// directory can be named), and a name that exists as something other than
// a regular file (a symbolic link is never followed), or below a backups/
// that is not a plain directory. A name that does not exist is fine.
func (d *Dir) file(rel string) (string, error) {
	if !formName(rel) {
		return "", fmt.Errorf("%w: %q is not a file name of a save directory", autosave.ErrCorrupt, rel)
	}
	if strings.HasPrefix(rel, BackupDir+"/") {
		if err := d.checkBackupDir(); err != nil {
			return "", err
		}
	}
	p := filepath.Join(d.path, filepath.FromSlash(rel))
	if err := d.checkRegular(rel, p); err != nil {
		return "", err
	}
	return p, nil
}

// checkRegular refuses a path that exists as anything but a regular file.
func (d *Dir) checkRegular(rel, p string) error {
	return fsguard.Regular(d.fs, p, rel, autosave.ErrCorrupt)
}

// Refused lists the files of the directory (its top level and backups/)
// that bear a name of the save format but are not regular files: symbolic
// links, named pipes, devices, directories. No operation of a Dir opens or
// follows one (see File); each is a Problem naming it relative to the
// directory, its Err (wrapping ErrCorrupt) saying what it is, for a tool
// to say what it refused.
func (d *Dir) Refused() []chunkstore.Problem {
	var out []chunkstore.Problem
	subs := []string{"."}
	if d.checkBackupDir() == nil {
		subs = append(subs, BackupDir)
	}
	for _, sub := range subs {
		names, _ := d.fs.ReadDir(filepath.Join(d.path, sub))
		for _, n := range names {
			rel := path.Join(sub, n)
			if !formName(rel) {
				continue
			}
			if err := d.checkRegular(rel, filepath.Join(d.path, filepath.FromSlash(rel))); err != nil {
				out = append(out, chunkstore.Problem{File: rel, Section: chunkstore.SectionFile, Offset: -1, Err: err})
			}
		}
	}
	return out
}

// checkBackupDir refuses a backups/ that exists as anything but a plain
// directory: a symbolic link to another directory is never followed.
func (d *Dir) checkBackupDir() error {
	fi, err := d.fs.Lstat(filepath.Join(d.path, BackupDir))
	if err != nil || fi.IsDir() {
		return nil
	}
	return fmt.Errorf("%w: %s/ is %s, not a directory: not followed (move it away; arksave check lists the rest)",
		autosave.ErrCorrupt, BackupDir, fsguard.Describe(fi.Mode()))
}
