package savetool

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
	"github.com/arksave/arksave/vfs"
)

// DirInfo describes a save directory: what arksave inspect prints.
type DirInfo struct {
	Path          string           `json:"path"`
	Bytes         int64            `json:"bytes"` // every file of the save directory
	ManifestError string           `json:"manifest_error,omitempty"`
	Generations   []GenerationInfo `json:"generations"` // the committed one first, then the backups, newest first
	Stores        []StoreInfo      `json:"stores"`      // each chunk store a generation names, at the newest generation naming it
	// History is what the older generations kept in backups/ cost; nil
	// without a committed generation.
	History *HistoryInfo `json:"history,omitempty"`
	// World describes the committed generation's ECS world file; WorldError
	// says why it could not be read whole.
	World      *pecs.Info `json:"-"`
	WorldFile  string     `json:"world_file,omitempty"`
	WorldError string     `json:"world_error,omitempty"`
	// WorldEncrypted says the world file is encrypted and was read without
	// the key (Options.Key): intact as stored, its content not read.
	WorldEncrypted bool `json:"world_encrypted,omitempty"`
	// Players lists the players the committed generation holds, with the
	// files that hold them; PlayersError says why they could not be read.
	Players      []string `json:"players,omitempty"`
	PlayersIndex string   `json:"players_index,omitempty"`
	PlayersData  string   `json:"players_data,omitempty"`
	PlayersError string   `json:"players_error,omitempty"`
	// Denied names a path that could not be read for want of permission
	// (the first met): the errors it caused are a permission problem, not
	// damage.
	Denied string `json:"denied,omitempty"`
}

// note returns err's message for a field of the description, and keeps
// the path of a refused permission in Denied.
func (info *DirInfo) note(err error) string {
	if p, ok := errs.Denied(err); ok && info.Denied == "" {
		info.Denied = cmp.Or(p, info.Path)
	}
	return err.Error()
}

// GenerationInfo is one committed or backed-up generation.
type GenerationInfo struct {
	Generation      uint64    `json:"generation"`
	Current         bool      `json:"current"`
	FormatVersion   int       `json:"format_version"`
	Modified        time.Time `json:"modified"`
	World           string    `json:"world"`
	WorldBytes      int64     `json:"world_bytes"`
	Store           string    `json:"store"`
	StoreGeneration uint64    `json:"store_generation"`
	Chunks          uint32    `json:"chunks"` // stored chunks, from the root
}

// HistoryInfo is what the older generations kept in backups/ cost beside
// the committed one: they share the chunk store's data files and the
// players files with it, so their cost is the files only they use (the
// records that changed after them, the files compaction emptied since,
// their players indexes, their copies) and their own world files.
type HistoryInfo struct {
	Generations int       `json:"generations"`           // older generations kept (damaged backup manifests not counted)
	Oldest      time.Time `json:"oldest,omitzero"`       // when the oldest of them was saved
	Newest      time.Time `json:"newest,omitzero"`       // when the newest of them was saved
	DataFiles   int       `json:"data_files"`            // chunk store, data and players files only they use
	DataBytes   int64     `json:"data_bytes"`            // the bytes of those files
	WorldBytes  int64     `json:"world_bytes"`           // the bytes of their world files
	Unknown     int       `json:"unknown_data,omitzero"` // of format 1 or 2: their manifests do not name their data files
}

// StoreInfo describes a chunk store at one generation.
type StoreInfo struct {
	Name             string  `json:"name"`
	Generation       uint64  `json:"generation"`
	FileBytes        int64   `json:"file_bytes"`
	ChunkSize        uint16  `json:"chunk_size"`
	TileSize         uint16  `json:"tile_size"`
	Seed             uint64  `json:"seed"`
	GeneratorVersion uint32  `json:"generator_version"`
	Axes             int     `json:"axes"` // of a chunk key: 2 (x, y), 3 (x, y, z) or 4 (x, y, z, w)
	Chunks           int     `json:"chunks"`
	Empty            int     `json:"empty"`
	Delta            int     `json:"delta"`
	Full             int     `json:"full"`
	Palette          int     `json:"palette"`
	BodyBlocks       int     `json:"body_blocks"` // chunks with pixel bodies or regional entities
	Bodies           int     `json:"bodies"`
	BodyChunks       int     `json:"body_chunks"`  // chunks with pixel bodies
	Sections         int     `json:"sections"`     // entity sections of the chunks' regional entities
	Entities         int     `json:"entities"`     // regional entities in them
	RecordBytes      int64   `json:"record_bytes"` // live chunk and body records
	TableBytes       int64   `json:"table_bytes"`  // live page table
	DeadBytes        int64   `json:"dead_bytes"`   // what compaction reclaims
	DeadRatio        float64 `json:"dead_ratio"`
	JournalSegments  int     `json:"journal_segments"`
	// EncryptedRecords counts the live chunk and body records stored
	// encrypted (Plugin.Key): without the key their pixels, bodies and
	// entities are not read (Bodies, Sections and Entities leave them
	// out).
	EncryptedRecords int `json:"encrypted_records,omitempty"`
	// FormatVersion is the chunk store format of the generation's root
	// (0 when not known: a store file inspected on its own).
	FormatVersion int            `json:"format_version,omitempty"`
	DataFiles     []DataFileInfo `json:"data_files"` // the data files the generation uses
	Error         string         `json:"error,omitempty"`
}

// DataFileInfo describes a data file of a chunk store.
type DataFileInfo struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	Dead  int64  `json:"dead"` // what compacting it reclaims
	Error string `json:"error,omitempty"`
}

// InspectDir describes the save directory at dir. It changes nothing and
// takes no lock: it works while a game saves into the directory, on one
// consistent generation. A damaged part is described as far as it reads
// and its error noted.
func InspectDir(dir string, o Options) (*DirInfo, error) {
	fsys := o.fs()
	if _, err := openSave(fsys, dir); err != nil {
		return nil, err
	}
	var info *DirInfo
	err := savedir.ReadConsistent(fsys, dir, func(d *savedir.Dir) error {
		info = inspectDir(fsys, dir, d, o.Key)
		if info.failed() {
			return errInspect
		}
		return nil
	})
	if err != nil && err != errInspect {
		return nil, err
	}
	return info, nil
}

// errInspect makes ReadConsistent look again when a description met an
// error: a concurrent commit may have moved a file on.
var errInspect = errors.New("savetool: inspect met an error")

// failed reports whether any part of the description has an error.
func (info *DirInfo) failed() bool {
	if info.WorldError != "" {
		return true
	}
	for _, st := range info.Stores {
		if st.Error != "" {
			return true
		}
	}
	return false
}

func inspectDir(fsys vfs.FS, dir string, d *savedir.Dir, key []byte) *DirInfo {
	info := &DirInfo{Path: dir, Bytes: dirBytes(fsys, dir), Generations: []GenerationInfo{}, Stores: []StoreInfo{}}
	gens := d.Backups()
	if m := d.Manifest(); m != nil {
		gens = append([]*savedir.Manifest{m}, gens...)
	} else {
		info.ManifestError = info.note(d.ManifestErr())
	}
	seen := map[string]bool{}
	for i, m := range gens {
		g := GenerationInfo{
			Generation: m.Generation, Current: i == 0 && d.Manifest() != nil, FormatVersion: m.Version,
			Modified: time.UnixMilli(m.ModifiedMS).UTC(), World: m.World.Name, WorldBytes: m.World.Size,
			Store: m.Chunks.Name, StoreGeneration: m.Chunks.Generation,
		}
		if root, err := rootOf(d, m); err == nil {
			if ri, err := storetool.Tool.ParseRoot(root); err == nil {
				g.Chunks = ri.Chunks
			}
		}
		info.Generations = append(info.Generations, g)
		if !seen[m.Chunks.Name] {
			seen[m.Chunks.Name] = true
			st := StoreInfo{Name: m.Chunks.Name, DataFiles: []DataFileInfo{}}
			if root, err := rootOf(d, m); err == nil {
				if ri, err := storetool.Tool.ParseRoot(root); err == nil {
					st.FormatVersion = int(ri.FormatVersion)
				}
			}
			if s, err := openGeneration(d, m, *inspectOptions(fsys, key)); err != nil {
				st.Error = info.note(err)
			} else {
				describeStore(&st, s)
				s.Close()
			}
			info.Stores = append(info.Stores, st)
		}
	}
	if m := d.Manifest(); m != nil {
		info.History = historyOf(fsys, d, m, gens[1:])
	}
	if m := d.Manifest(); m != nil && m.Players != nil {
		info.PlayersIndex, info.PlayersData = m.Players.Index.Name, m.Players.Data
		if p, err := d.ReadPlayers(m); err != nil {
			info.PlayersError = info.note(err)
		} else {
			info.Players = p.IDs()
		}
	}
	if d.Manifest() != nil {
		m := d.Manifest()
		info.WorldFile = m.World.Name
		data, err := d.ReadWorld(m)
		if err != nil {
			// Describe what the file holds even when it does not match the
			// manifest.
			if p, perr := d.File(m.World.Name); perr == nil {
				data, _ = vfs.ReadFile(fsys, p)
			}
			info.WorldError = info.note(err)
		}
		if data != nil {
			wi, err := ReadPECSInfo(data, key)
			if errors.Is(err, archetype.ErrEncrypted) {
				info.WorldEncrypted, err = true, nil
			}
			info.World = wi
			if err != nil && info.WorldError == "" {
				info.WorldError = err.Error()
			}
		}
	}
	return info
}

// dataManifestVersion is the first manifest format that names the data
// files of its generation's chunk store (savedir.ManifestVersion's history).
const dataManifestVersion = 3

// historyOf sums what the backups (older generations, newest first) cost
// beside the committed generation cur: the files of their chunk stores and
// players that cur does not use, counted once, and their world files.
func historyOf(fsys vfs.FS, d *savedir.Dir, cur *savedir.Manifest, backups []*savedir.Manifest) *HistoryInfo {
	h := &HistoryInfo{Generations: len(backups)}
	if len(backups) > 0 {
		h.Newest = time.UnixMilli(backups[0].ModifiedMS).UTC()
		h.Oldest = time.UnixMilli(backups[len(backups)-1].ModifiedMS).UTC()
	}
	used := map[string]bool{}
	for _, n := range generationFiles(cur) {
		used[n] = true
	}
	size := func(name string) int64 { return dirFileSize(fsys, d, name) }
	for _, b := range backups {
		h.WorldBytes += size(b.World.Name)
		if b.Version < dataManifestVersion {
			h.Unknown++
			continue
		}
		for _, n := range generationFiles(b) {
			if !used[n] && n != b.World.Name {
				used[n] = true
				h.DataFiles++
				h.DataBytes += size(n)
			}
		}
	}
	return h
}

// InspectStore describes the chunk store file at path at its newest
// generation.
func InspectStore(path string, o Options) (*StoreInfo, error) {
	s, err := chunkstore.Open(path, inspectOptions(o.fs(), o.Key))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	st := &StoreInfo{Name: filepath.Base(path), DataFiles: []DataFileInfo{}}
	describeStore(st, s)
	if rep := s.OpenReport(); !rep.OK() {
		st.Error = fmt.Sprintf("%s while opening; arksave check lists them", words.Count(len(rep.Problems), "problem", "problems"))
	}
	return st, nil
}

func describeStore(st *StoreInfo, s *chunkstore.Store) {
	stats := storetool.Tool.Stats(s)
	cfg := s.Options()
	st.Generation = stats.Generation
	st.FileBytes = stats.FileSize
	st.ChunkSize, st.TileSize, st.Seed, st.GeneratorVersion = cfg.ChunkSize, cfg.TileSize, cfg.Seed, s.GeneratorVersion()
	st.Axes = s.Options().Axes
	st.Chunks, st.Empty, st.Delta, st.Full, st.Palette, st.BodyBlocks = stats.Chunks, stats.Empty, stats.Delta, stats.Full, stats.Palette, stats.BodyBlocks
	st.RecordBytes, st.TableBytes, st.DeadBytes = stats.RecordBytes, stats.TableBytes, stats.DeadBytes
	if stats.FileSize > 0 {
		st.DeadRatio = float64(stats.DeadBytes) / float64(stats.FileSize)
	}
	st.JournalSegments = stats.JournalSegments
	for _, f := range storetool.Tool.Files(s) {
		if f.Number == 0 {
			continue
		}
		df := DataFileInfo{Name: f.Name, Bytes: f.Size, Dead: f.Dead}
		if f.Err != nil {
			df.Error = f.Err.Error()
		}
		st.DataFiles = append(st.DataFiles, df)
	}
	var bad int
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if !e.Handle.IsZero() {
			if enc, err := storetool.Tool.Encrypted(s, e.Handle); err == nil && enc {
				st.EncryptedRecords++
			}
		}
		if e.Type == chunkstore.BodyBlock {
			blk, err := s.EntitiesKey(e.Key)
			if err != nil && !errors.Is(err, archetype.ErrEncrypted) {
				bad++
			}
			st.Bodies += len(blk.Bodies)
			if len(blk.Bodies) > 0 {
				st.BodyChunks++
			}
			st.Sections += len(blk.Sections)
			for _, sec := range blk.Sections {
				if info, err := pecs.ReadInfo(bytes.NewReader(sec)); err == nil {
					st.Entities += int(info.Header.Entities)
				}
			}
		}
		return true
	})
	if bad > 0 {
		st.Error = fmt.Sprintf("%d body blocks do not read; arksave check lists them", bad)
	}
}

// dirBytes sums the sizes of the save's files: the top level and backups/.
func dirBytes(fsys vfs.FS, dir string) int64 {
	var n int64
	for _, sub := range []string{"", savedir.BackupDir} {
		names, _ := fsys.ReadDir(filepath.Join(dir, sub))
		for _, name := range names {
			if st, err := fsys.Stat(filepath.Join(dir, sub, name)); err == nil && !st.IsDir() {
				n += st.Size()
			}
		}
	}
	return n
}

// storeFiles lists the chunk store files of a directory, newest first:
// chunks-<g>.pxsw by g descending, then chunks.pxsw, then any other (the
// copies a repair makes for backups).
func storeFiles(fsys vfs.FS, dir string) []string {
	names, _ := fsys.ReadDir(dir)
	rank := func(n string) int64 {
		g, _ := savedir.StoreGeneration(n)
		switch {
		case strings.Contains(n, "-backup-"):
			return -1
		case n == savedir.ChunksName:
			return 0
		}
		return int64(g) + 1
	}
	var out []string
	for _, n := range names {
		if _, ok := savedir.StoreGeneration(n); ok {
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) > rank(out[j]) })
	return out
}
